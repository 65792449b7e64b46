/* The dmaconn command line as a function, for main() and for tests that
 * drive it in-process (fuzz/fuzz_cli.c). */
#ifndef DMACONN_CLI_H
#define DMACONN_CLI_H

/* Runs the CLI on argv and returns its exit status.  May be called again:
 * getopt's state is reset on entry. */
int dmaconn_cli_main(int argc, char **argv);

#endif
