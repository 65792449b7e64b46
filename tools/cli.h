/* SPDX-License-Identifier: BSD-3-Clause */
/* The dmaconn command line as a function, for main() and for tests that
 * drive it in-process (fuzz/fuzz_cli.c). */
#ifndef DMACONN_CLI_H
#define DMACONN_CLI_H

/* Runs the CLI on argv and returns its exit status.  May be called again:
 * getopt's state is reset on entry. */
int dmaconn_cli_main(int argc, char **argv);

/* s with each byte that is not part of valid UTF-8 replaced by U+FFFD
 * (Jansson and Graphviz take valid UTF-8 only); NULL when s is already
 * valid (or out of memory), else a string the caller frees. */
char *cli_utf8_fix(const char *s);

/* The length of the UTF-8 character at p (before end), as the library and
 * Jansson accept one: 0 when it is not one (a stray byte, an overlong form,
 * a surrogate, past U+10FFFF); *cp its code point. */
int cli_utf8_char(const unsigned char *p, const unsigned char *end, unsigned *cp);

/* As cli_utf8_fix, and each control character as well (C0 with tab and line
 * breaks, DEL, C1, U+2028, U+2029): text that came from outside (a file
 * name) shown in a line of output.  NULL when s is fine (or out of memory). */
char *cli_text_fix(const char *s);

/* Ends the verification's progress line on standard error, if one is shown
 * (before anything else is written there). */
void cli_progress_end(void);

#endif
