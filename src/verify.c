/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_verify(): the opt-in functional check.  The CUDA work happens in
 * dmaconn-verify-helper (src/backends/cuda_verify/verify_helper.c), spawned with posix_spawn so
 * that this process never loads the driver; here we find the helper, run it
 * under a deadline, read its records (one JSON object a line, through the
 * result codec; the protocol is documented in the helper) as they arrive
 * and build the result, then compare it with what NVML says ("cuda"/"p2p").
 *
 * The helper is DMACONN_VERIFY_HELPER (an absolute path) when set, else
 * <dir>/dmaconn-verify-helper (the build tree) or
 * <dir>/DMACONN_HELPER_RELDIR/dmaconn-verify-helper (the installed tree),
 * where <dir> holds this library.
 *
 * A helper that cannot be run, crashes, times out, exits non-zero or writes
 * something unreadable fails every pair with the reason, plus one warning;
 * so does one whose exit status cannot be seen (fail closed: a full report
 * followed by a crash is no pass), and a caller that has its children reaped
 * automatically does not start it.  It runs in a process group of its own,
 * killed when the run ends; what it says is cleaned as results hold text.
 * The diagonal (i -> i) is DMACONN_VERIFY_NO_PEER: a device is not its own
 * peer.  No global state: everything lives on the caller's stack and heap.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "internal.h"
#include "verify/verify.h"

#ifndef DMACONN_HELPER_RELDIR
#define DMACONN_HELPER_RELDIR "../libexec/dmaconn"
#endif
#define HELPER_NAME "dmaconn-verify-helper"
#define DEFAULT_TIMEOUT_MS 120000
#define MAX_OUTPUT (4u << 20) /* more than this from the helper is garbage */
#define STDERR_TAIL 512
#define REAP_GRACE_MS 5000

/* One run of the helper(s), as read: what dmaconn_verify_run() turns into a
 * result and the "cuda"/"verified" view reads (through that result). */
struct dc_verify_run {
	int n;
	unsigned char *status;   /* n*n dmaconn_verify_status */
	struct dc_props *pairs;  /* n*n */
	struct dc_strings warnings;
	int quiet;  /* warnings are kept, not sent to the sink (dc_verify_cuda) */
	int failed; /* the run as a whole failed */
	char **pci; /* n bus ids as the driver names them, entries may be NULL */
};

static void run_free(struct dc_verify_run *v)
{
	if (!v)
		return;
	for (size_t k = 0; v->pairs && k < (size_t)v->n * (size_t)v->n; k++)
		dc_props_clear(&v->pairs[k]);
	free(v->pairs);
	free(v->status);
	for (int i = 0; v->pci && i < v->n; i++)
		free(v->pci[i]);
	free(v->pci);
	dc_strings_clear(&v->warnings);
	free(v);
}

static int in_range(const struct dc_verify_run *v, int i, int j)
{
	return v && i >= 0 && j >= 0 && i < v->n && j < v->n;
}

static dmaconn_verify_status run_status(const struct dc_verify_run *v, int i, int j)
{
	if (!in_range(v, i, j))
		return DMACONN_VERIFY_FAIL;
	return (dmaconn_verify_status)v->status[(size_t)i * (size_t)v->n + (size_t)j];
}

static const struct dc_props *pair_props(const struct dc_verify_run *v, int i, int j)
{
	return in_range(v, i, j) ? &v->pairs[(size_t)i * (size_t)v->n + (size_t)j] : NULL;
}

/* ------------------------------------------ dmaconn_verify(), as a result */

/* The result of dmaconn_verify_run(): the older accessors read it. */
struct dmaconn_verify_result {
	dmaconn_result *r;
};

/* A pair's "status" as the result holds it (dmaconn_verify_run()). */
static const char *const status_names[] = { "pass", "fail", "no_peer" };

dmaconn_verify_status dc_verify_status(const dmaconn_result *r, int i, int j)
{
	int n = dmaconn_result_size(r);
	if (i < 0 || j < 0 || i >= n || j >= n)
		return DMACONN_VERIFY_FAIL;
	if (i == j)
		return DMACONN_VERIFY_NO_PEER;
	const char *st = dmaconn_result_pair_get(r, i, j, "status");
	for (int k = 0; st && k < 3; k++)
		if (!strcmp(st, status_names[k]))
			return (dmaconn_verify_status)k;
	return DMACONN_VERIFY_FAIL;
}

void dmaconn_verify_result_free(dmaconn_verify_result *v)
{
	if (v)
		dmaconn_result_release(v->r);
	free(v);
}

int dmaconn_verify_size(const dmaconn_verify_result *v)
{
	return v ? dmaconn_result_size(v->r) : 0;
}

dmaconn_verify_status dmaconn_verify_status_of(const dmaconn_verify_result *v, int i, int j)
{
	return v ? dc_verify_status(v->r, i, j) : DMACONN_VERIFY_FAIL;
}

/* The result's pair properties start with "status", which these accessors
 * have always kept apart (dmaconn_verify_status_of()). */
const char *dmaconn_verify_pair_get(const dmaconn_verify_result *v, int i, int j, const char *key)
{
	return v && key && strcmp(key, "status") ? dmaconn_result_pair_get(v->r, i, j, key) : NULL;
}

int dmaconn_verify_pair_property_count(const dmaconn_verify_result *v, int i, int j)
{
	int count = v ? dmaconn_result_pair_property_count(v->r, i, j) : 0;
	return count > 0 ? count - 1 : 0;
}

const char *dmaconn_verify_pair_property_key(const dmaconn_verify_result *v, int i, int j, int k)
{
	return v && k >= 0 ? dmaconn_result_pair_property_key(v->r, i, j, k + 1) : NULL;
}

const char *dmaconn_verify_pair_property_value(const dmaconn_verify_result *v, int i, int j, int k)
{
	return v && k >= 0 ? dmaconn_result_pair_property_value(v->r, i, j, k + 1) : NULL;
}

int dmaconn_verify_warning_count(const dmaconn_verify_result *v)
{
	return v ? dmaconn_result_warning_count(v->r) : 0;
}

const char *dmaconn_verify_warning(const dmaconn_verify_result *v, int k)
{
	return v ? dmaconn_result_warning(v->r, k) : NULL;
}

/* --------------------------------------------------------- locating it */

static const char anchor; /* an address inside this library, for dladdr */

/* 0 with the helper's path; -1 with the reason. */
static int find_helper(char *path, size_t len, char *why, size_t whylen)
{
	const char *env = secure_getenv("DMACONN_VERIFY_HELPER");
	if (env && *env) {
		if (env[0] != '/') {
			snprintf(why, whylen, "DMACONN_VERIFY_HELPER must be an absolute path, not '%.600s'",
				 env);
			return -1;
		}
		if ((size_t)snprintf(path, len, "%s", env) >= len) {
			snprintf(why, whylen, "DMACONN_VERIFY_HELPER is too long");
			return -1;
		}
		return 0;
	}
	Dl_info info;
	if (!dladdr(&anchor, &info) || !info.dli_fname || info.dli_fname[0] != '/') {
		snprintf(why, whylen, "cannot locate libdmaconn to find " HELPER_NAME
				      " (set DMACONN_VERIFY_HELPER)");
		return -1;
	}
	int dirlen = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
	const char *subdirs[] = { "", "/" DMACONN_HELPER_RELDIR };
	for (size_t k = 0; k < sizeof(subdirs) / sizeof(subdirs[0]); k++) {
		int n = snprintf(path, len, "%.*s%s/" HELPER_NAME, dirlen, info.dli_fname, subdirs[k]);
		if (n > 0 && (size_t)n < len && access(path, X_OK) == 0)
			return 0;
	}
#ifdef DMACONN_HELPER_PATH
	if ((size_t)snprintf(path, len, "%s", DMACONN_HELPER_PATH) < len && access(path, X_OK) == 0)
		return 0;
#endif
	snprintf(why, whylen,
		 HELPER_NAME " not found in %.*s or %.*s/" DMACONN_HELPER_RELDIR
			     " (set DMACONN_VERIFY_HELPER)",
		 dirlen, info.dli_fname, dirlen, info.dli_fname);
	return -1;
}

int dc_verify_helper_path(char *path, size_t len)
{
	char why[1024];
	return find_helper(path, len, why, sizeof(why));
}

/* ------------------------------------------------------------ running it */

struct run {
	char *out; /* stdout, NUL-terminated */
	size_t len, cap;
	char err[STDERR_TAIL + 1]; /* the end of stderr */
	size_t errlen;
	int spawned;
	int timed_out, too_much;
	int pair_hung;          /* a pair exceeded its own timeout */
	int in_pair;            /* the last complete line was a "begin" record */
	long long pair_start;   /* when that record arrived */
	size_t scanned;         /* bytes of out already looked at for lines */
	int status_known, exited, code, signaled, sig;
	int status_lost;        /* reaped by someone else: how it ended is unknown */
	int ndev_lines;         /* "device" records of this run, for progress */
	struct progress *prog;  /* pairs reported over every run (run_all) */
	long long elapsed_ms;
};

/* Pairs reported so far over every run of the helper, for the progress
 * callback (dmaconn_set_verify_progress). */
struct progress {
	int done, total;
};

static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static dmaconn_verify_progress_fn progress_fn;
static void *progress_data;

void dmaconn_set_verify_progress(dmaconn_verify_progress_fn fn, void *user_data)
{
	pthread_mutex_lock(&progress_lock);
	progress_fn = fn;
	progress_data = user_data;
	pthread_mutex_unlock(&progress_lock);
}

void dc_verify_fork(int phase)
{
	if (phase == DC_FORK_PREPARE)
		pthread_mutex_lock(&progress_lock);
	else
		pthread_mutex_unlock(&progress_lock);
}

static void progress_report(const struct progress *p)
{
	pthread_mutex_lock(&progress_lock);
	dmaconn_verify_progress_fn fn = progress_fn;
	void *data = progress_data;
	pthread_mutex_unlock(&progress_lock);
	if (fn && p->total > 0)
		fn(p->done < p->total ? p->done : p->total, p->total, data);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void *reaper(void *arg)
{
	pid_t pid = (pid_t)(long)arg;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Kills the helper's process group (the helper and whatever it started)
 * and reaps the helper; if it will not die in time (stuck in the driver), a
 * detached thread reaps it later.  The helper is not reaped before its
 * group is killed, so that the group's id cannot have been reused. */
static void kill_and_reap(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL); /* in case it is not its group's leader */
	long long until = now_ms() + REAP_GRACE_MS;
	for (;;) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		if (now_ms() >= until)
			break;
		sleep_ms(5);
	}
	pthread_t t;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_create(&t, &attr, reaper, (void *)(long)pid);
		pthread_attr_destroy(&attr);
	}
}

static int append_out(struct run *r, const char *buf, size_t n)
{
	if (r->len + n > MAX_OUTPUT) {
		r->too_much = 1;
		return -1;
	}
	if (r->len + n + 1 > r->cap) {
		size_t ncap = r->cap ? r->cap : 4096;
		while (ncap < r->len + n + 1)
			ncap *= 2;
		char *grown = realloc(r->out, ncap);
		if (!grown)
			return -2;
		r->out = grown;
		r->cap = ncap;
	}
	memcpy(r->out + r->len, buf, n);
	r->len += n;
	r->out[r->len] = '\0';
	return 0;
}

static void append_err(struct run *r, const char *buf, size_t n)
{
	if (n >= STDERR_TAIL) {
		memcpy(r->err, buf + n - STDERR_TAIL, STDERR_TAIL);
		r->errlen = STDERR_TAIL;
	} else {
		size_t keep = r->errlen + n > STDERR_TAIL ? STDERR_TAIL - n : r->errlen;
		memmove(r->err, r->err + r->errlen - keep, keep);
		memcpy(r->err + keep, buf, n);
		r->errlen = keep + n;
	}
	r->err[r->errlen] = '\0';
}

/* A record: one line of the helper's output, a JSON object (the protocol
 * in tools/verify_helper.c); NULL when it is not one. */
static json_t *record_read(const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (rec && !json_is_object(rec)) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* The record's type ("" when it has none). */
static const char *record_type(const json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "record"));
	return type ? type : "";
}

/* Notes the "begin" and "pair" records that arrived, for the pair timeout. */
static void track_pairs(struct run *r)
{
	for (;;) {
		char *nl = memchr(r->out + r->scanned, '\n', r->len - r->scanned);
		if (!nl)
			return;
		json_t *rec = record_read(r->out + r->scanned, (size_t)(nl - r->out) - r->scanned);
		const char *type = record_type(rec);
		if (!strcmp(type, "device")) {
			r->ndev_lines++;
		} else if (!strcmp(type, "begin")) {
			r->in_pair = 1;
			r->pair_start = now_ms();
			if (r->prog && !r->prog->total) {
				r->prog->total = r->ndev_lines * (r->ndev_lines - 1);
				progress_report(r->prog);
			}
		} else if (!strcmp(type, "pair")) {
			r->in_pair = 0;
			if (r->prog) {
				r->prog->done++;
				progress_report(r->prog);
			}
		}
		json_decref(rec);
		r->scanned = (size_t)(nl - r->out) + 1;
	}
}

/*
 * Whether the helper has ended, without reaping it (its zombie keeps its
 * process group's id from being reused until we kill the group): 1 with
 * its status in r, 0 while it runs, -1 when it is gone without a status (a
 * handler of the caller's reaped it).
 */
static int helper_ended(pid_t pid, struct run *r)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
		if (errno == EINTR)
			return 0;
		r->status_lost = 1;
		return -1;
	}
	if (si.si_pid != pid)
		return 0;
	r->status_known = 1;
	if (si.si_code == CLD_EXITED) {
		r->exited = 1;
		r->code = si.si_status;
	} else {
		r->signaled = 1;
		r->sig = si.si_status;
	}
	return 1;
}

/* The helper has ended (helper_ended() said 1): whatever it started dies
 * with its group, then it is reaped. */
static void finish_helper(pid_t pid)
{
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * Why the helper's exit status could not be seen, when this process has
 * children reaped automatically (SIGCHLD ignored, or SA_NOCLDWAIT); else
 * NULL.  A helper that printed a full pass and then crashed would read as a
 * pass, so the helper is then not run at all.
 */
static const char *children_unwaitable(void)
{
	struct sigaction sa;
	if (sigaction(SIGCHLD, NULL, &sa) != 0)
		return NULL;
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN)
		return "this process ignores SIGCHLD";
	if (sa.sa_flags & SA_NOCLDWAIT)
		return "this process sets SA_NOCLDWAIT for SIGCHLD";
	return NULL;
}

/* How long a poll waits at most before looking whether the helper ended:
 * something it started may hold its pipes open after it. */
#define EXIT_CHECK_MS 50

/*
 * Runs the helper (with "--after AFTER" when after is not NULL) until it
 * ends, the absolute deadline (now_ms() time) passes, or one pair takes
 * longer than pair_timeout_ms (r->pair_hung).  The helper runs in a process
 * group of its own, which is killed whenever the run ends.  Returns 0 when
 * it ran (r says how it ended), -1 when it could not be started (reason in
 * why), -2 when out of memory.
 */
static int run_helper(const char *path, const char *after, long long deadline,
		      int pair_timeout_ms, struct run *r, char *why, size_t whylen)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int have_fa = 0, have_attr = 0, rc = -1;
	pid_t pid = -1;
	long long start = now_ms();

	const char *unwaitable = children_unwaitable();
	if (unwaitable) {
		snprintf(why, whylen, "the verify helper was not run: %s, so its exit status could not "
				      "be seen",
			 unwaitable);
		goto out;
	}
	/* posix_spawn reports a failed exec as exit status 127 on some
	 * systems (and under valgrind): check first, for a clear reason. */
	if (access(path, X_OK) != 0) {
		char buf[128];
		snprintf(why, whylen, "cannot run the verify helper %.600s: %s", path,
			 strerror_r(errno, buf, sizeof(buf)));
		goto out;
	}
	if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		char buf[128];
		snprintf(why, whylen, "cannot create pipes for the verify helper: %s",
			 strerror_r(errno, buf, sizeof(buf)));
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto nomem;
	have_fa = 1;
	if (posix_spawnattr_init(&attr) != 0)
		goto nomem;
	have_attr = 1;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, outp[1], 1) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, errp[1], 2) != 0 ||
	    posix_spawnattr_setsigmask(&attr, &none) != 0 ||
	    posix_spawnattr_setsigdefault(&attr, &all) != 0 || posix_spawnattr_setpgroup(&attr, 0) != 0 ||
	    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						    POSIX_SPAWN_SETPGROUP) != 0)
		goto nomem;

	char *argv[] = { (char *)path, after ? "--after" : NULL, (char *)after, NULL };
	int err = posix_spawn(&pid, path, &fa, &attr, argv, environ);
	if (err != 0) {
		char buf[128];
		snprintf(why, whylen, "cannot run the verify helper %.600s: %s", path,
			 strerror_r(err, buf, sizeof(buf)));
		goto out;
	}
	/* Its own group from the start, whichever of us gets there first
	 * (this fails harmlessly once it has run exec). */
	setpgid(pid, pid);
	r->spawned = 1;
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;

	struct pollfd fds[2];
	int open_out = 1, open_err = 1, ended = 0;
	long long drain_until = 0;
	while (open_out || open_err) {
		long long t = now_ms(), left;
		if (!ended && (ended = helper_ended(pid, r)) != 0) {
			/* What it left behind may hold the pipes: it dies
			 * now, and what it wrote is read for a moment. */
			if (ended > 0)
				kill(-pid, SIGKILL);
			drain_until = t + REAP_GRACE_MS;
		}
		if (ended) {
			left = drain_until - t;
			if (left <= 0)
				break;
		} else {
			left = deadline - t;
			if (r->in_pair && r->pair_start + pair_timeout_ms - t < left) {
				left = r->pair_start + pair_timeout_ms - t;
				if (left <= 0) {
					r->pair_hung = 1;
					break;
				}
			}
			if (left <= 0) {
				r->timed_out = 1;
				break;
			}
			if (left > EXIT_CHECK_MS)
				left = EXIT_CHECK_MS;
		}
		int nfds = 0;
		if (open_out)
			fds[nfds++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
		if (open_err)
			fds[nfds++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
		int pr = poll(fds, (nfds_t)nfds, left > INT_MAX ? INT_MAX : (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			if (!ended)
				r->timed_out = 1; /* cannot wait any more: treat as a timeout */
			break;
		}
		for (int k = 0; k < nfds; k++) {
			if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[8192];
			ssize_t n = read(fds[k].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			int is_out = fds[k].fd == outp[0];
			if (n <= 0) {
				if (is_out)
					open_out = 0;
				else
					open_err = 0;
				continue;
			}
			if (!is_out) {
				append_err(r, buf, (size_t)n);
				continue;
			}
			int a = append_out(r, buf, (size_t)n);
			if (a == -2) {
				if (ended > 0)
					finish_helper(pid);
				else if (!ended)
					kill_and_reap(pid);
				pid = -1;
				goto nomem;
			}
			if (a == -1)
				open_out = open_err = 0; /* too much: stop reading, kill below */
			else
				track_pairs(r);
		}
	}
	if (ended > 0) {
		finish_helper(pid);
	} else if (ended < 0) {
		/* Reaped by someone else: nothing of ours is left to kill. */
	} else if (r->timed_out || r->too_much || r->pair_hung) {
		kill_and_reap(pid);
	} else {
		/* Both pipes closed: wait for the exit, still under the deadline. */
		for (;;) {
			int e = helper_ended(pid, r);
			if (e > 0)
				finish_helper(pid);
			if (e != 0)
				break;
			if (now_ms() >= deadline) {
				r->timed_out = 1;
				kill_and_reap(pid);
				break;
			}
			sleep_ms(2);
		}
	}
	r->elapsed_ms = now_ms() - start;
	rc = 0;
	goto out;
nomem:
	rc = -2;
out:
	if (have_fa)
		posix_spawn_file_actions_destroy(&fa);
	if (have_attr)
		posix_spawnattr_destroy(&attr);
	for (int k = 0; k < 2; k++) {
		if (outp[k] >= 0)
			close(outp[k]);
		if (errp[k] >= 0)
			close(errp[k]);
	}
	return rc;
}

/* ------------------------------------------------------------ parsing */

struct pair_rec {
	int from, to;
	dmaconn_verify_status status;
	struct dc_props props;
};

struct parsed {
	int ndev;           /* devices reported: ordinals 0..ndev-1 */
	char **pci;         /* per ordinal, may be NULL */
	int dev_cap;
	struct pair_rec *pairs;
	int npairs, pair_cap;
	int done, done_pairs;
	int open_from, open_to; /* the last "begin" without its "pair", or -1 */
	char *error;        /* the helper's error record */
	char garbled[256];  /* the first protocol violation */
};

static void parsed_clear(struct parsed *p)
{
	for (int i = 0; i < p->ndev; i++)
		free(p->pci[i]);
	free(p->pci);
	for (int k = 0; k < p->npairs; k++)
		dc_props_clear(&p->pairs[k].props);
	free(p->pairs);
	free(p->error);
	memset(p, 0, sizeof(*p));
	p->open_from = p->open_to = -1;
}

static int parse_int(const char *s, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* dc_props_set with key and value cleaned as results hold text: the
 * helper's words are never shown raw (escape sequences, forged lines). */
static int props_set_clean(struct dc_props *p, const char *key, const char *value)
{
	int oom = 0;
	char *k = dc_text_clean(key, &oom), *v = oom ? NULL : dc_text_clean(value, &oom);
	int rc = oom ? -1 : dc_props_set(p, k ? k : key, v ? v : value);
	free(k);
	free(v);
	return rc;
}

/* A cleaned copy of s (see props_set_clean); NULL when out of memory. */
static char *strdup_clean(const char *s)
{
	int oom = 0;
	char *c = dc_text_clean(s, &oom);
	return oom ? NULL : c ? c : strdup(s);
}

#define MAX_DEVICES 1024

/* rec's member key as an integer in [0, max], into *out; -1 when it is not
 * one, *out untouched when it is absent. */
static int record_int(const json_t *rec, const char *key, int max, int *out)
{
	const json_t *v = json_object_get(rec, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return -1;
	*out = (int)json_integer_value(v);
	return 0;
}

/* Parses one record.  Returns 0, -1 for a protocol violation (p->garbled
 * set), -2 when out of memory. */
static int parse_line(struct parsed *p, const char *line, size_t len, int lineno)
{
	if (strspn(line, " \t\r") == len)
		return 0; /* blank line */
	json_t *doc = record_read(line, len);
	if (!doc) {
		snprintf(p->garbled, sizeof(p->garbled), "line %d is not a JSON object: '%.40s'", lineno,
			 line);
		return -1;
	}
	const char *type = record_type(doc);
	struct pair_rec rec = { .from = -1, .to = -1 };
	int ordinal = -1, pairs = -1, status = -1;
	char *pci = NULL;
	int is_begin = !strcmp(type, "begin");
	int is_device = !strcmp(type, "device"), is_pair = !strcmp(type, "pair") || is_begin,
	    is_done = !strcmp(type, "done"), is_error = !strcmp(type, "error");
	const char *bad = NULL, *key;
	json_t *value;
	int rc = 0;

	if ((is_device && record_int(doc, "ordinal", MAX_DEVICES - 1, &ordinal) != 0) ||
	    (is_pair && record_int(doc, "from", MAX_DEVICES - 1, &rec.from) != 0) ||
	    (is_pair && record_int(doc, "to", MAX_DEVICES - 1, &rec.to) != 0) ||
	    (is_done && record_int(doc, "pairs", INT_MAX, &pairs) != 0)) {
		snprintf(p->garbled, sizeof(p->garbled), "line %d: a bad number", lineno);
		rc = -1;
		goto out;
	}
	json_object_foreach(doc, key, value) {
		if (!strcmp(key, "record") || (is_pair && (!strcmp(key, "from") || !strcmp(key, "to"))))
			continue;
		if ((!is_device && !is_pair && !is_error) || (is_device && strcmp(key, "pci")) ||
		    (is_error && strcmp(key, "reason")))
			continue;
		/* Every value as the text a result holds (src/codec.h). */
		char *text = dc_codec_text(key, value);
		if (!text) {
			if (!json_is_string(value) && !json_is_number(value) && !json_is_boolean(value)) {
				bad = key;
				break;
			}
			goto nomem;
		}
		int nomem = 0;
		if (is_device) {
			free(pci);
			nomem = !(pci = strdup_clean(text));
		} else if (is_pair && !strcmp(key, "status")) {
			status = !strcmp(text, "pass")	  ? DMACONN_VERIFY_PASS
				 : !strcmp(text, "fail")  ? DMACONN_VERIFY_FAIL
				 : !strcmp(text, "no_peer") ? DMACONN_VERIFY_NO_PEER
							     : -1;
			if (status < 0)
				bad = key;
		} else if (is_pair) {
			nomem = props_set_clean(&rec.props, key, text) != 0;
		} else if (is_error) {
			free(p->error);
			nomem = !(p->error = strdup_clean(text));
		}
		free(text);
		if (nomem)
			goto nomem;
		if (bad)
			break;
	}
	if (bad) {
		snprintf(p->garbled, sizeof(p->garbled), "line %d: bad %.40s", lineno, bad);
		rc = -1;
		goto out;
	}

	if (is_device) {
		if (ordinal != p->ndev) {
			snprintf(p->garbled, sizeof(p->garbled),
				 "line %d: device ordinal %d out of sequence", lineno, ordinal);
			rc = -1;
			goto out;
		}
		if (dc_grow(&p->pci, p->ndev, &p->dev_cap, sizeof(*p->pci), 8) != 0)
			goto nomem;
		p->pci[p->ndev++] = pci;
		pci = NULL;
	} else if (is_begin) {
		if (rec.from < 0 || rec.to < 0 || rec.from == rec.to || rec.from >= p->ndev ||
		    rec.to >= p->ndev) {
			snprintf(p->garbled, sizeof(p->garbled), "line %d: begin without a valid pair",
				 lineno);
			rc = -1;
			goto out;
		}
		p->open_from = rec.from;
		p->open_to = rec.to;
	} else if (is_pair) {
		p->open_from = p->open_to = -1;
		if (rec.from < 0 || rec.to < 0 || status < 0 || rec.from == rec.to ||
		    rec.from >= p->ndev || rec.to >= p->ndev) {
			snprintf(p->garbled, sizeof(p->garbled),
				 "line %d: pair record without a valid from, to and status", lineno);
			rc = -1;
			goto out;
		}
		if (dc_grow(&p->pairs, p->npairs, &p->pair_cap, sizeof(*p->pairs), 16) != 0)
			goto nomem;
		rec.status = (dmaconn_verify_status)status;
		p->pairs[p->npairs++] = rec;
		memset(&rec.props, 0, sizeof(rec.props));
	} else if (is_done) {
		if (pairs < 0) {
			snprintf(p->garbled, sizeof(p->garbled), "line %d: done without pairs", lineno);
			rc = -1;
			goto out;
		}
		p->done = 1;
		p->done_pairs = pairs;
	} else if (is_error && !p->error) {
		if (!(p->error = strdup("(no reason given)")))
			goto nomem;
	}
	/* Other record types are for newer readers: ignored. */
	goto out;
nomem:
	rc = -2;
out:
	json_decref(doc);
	free(pci);
	dc_props_clear(&rec.props);
	return rc;
}

/* Parses the whole output; a last line without '\n' is a protocol
 * violation (the helper ends every record with one). */
static int parse_output(struct parsed *p, char *out, size_t len)
{
	int lineno = 0;
	char *s = out, *end = out + len;
	while (s < end) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		lineno++;
		if (!nl) {
			if (!p->garbled[0])
				snprintf(p->garbled, sizeof(p->garbled), "line %d is incomplete", lineno);
			return 0;
		}
		*nl = '\0';
		if (memchr(s, '\0', (size_t)(nl - s))) {
			if (!p->garbled[0])
				snprintf(p->garbled, sizeof(p->garbled), "line %d holds a NUL byte", lineno);
			return 0;
		}
		int rc = parse_line(p, s, (size_t)(nl - s), lineno);
		if (rc == -2)
			return -2;
		if (rc == -1)
			return 0; /* stop at the first violation */
		s = nl + 1;
	}
	return 0;
}

/* ------------------------------------------------------------- the result */

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGABRT: return "SIGABRT";
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGINT: return "SIGINT";
	case SIGHUP: return "SIGHUP";
	case SIGPIPE: return "SIGPIPE";
	case SIGTRAP: return "SIGTRAP";
	case SIGXCPU: return "SIGXCPU";
	case SIGSYS: return "SIGSYS";
	}
	return "a signal";
}

/* The last non-empty line of the helper's stderr, printable, for reasons. */
static void stderr_note(const struct run *r, char *buf, size_t len)
{
	buf[0] = '\0';
	size_t n = r->errlen;
	while (n > 0 && (r->err[n - 1] == '\n' || r->err[n - 1] == '\r' || r->err[n - 1] == ' '))
		n--;
	size_t b = n;
	while (b > 0 && r->err[b - 1] != '\n')
		b--;
	if (b == n)
		return;
	char line[STDERR_TAIL + 1];
	size_t k = 0;
	for (size_t i = b; i < n; i++)
		line[k++] = (unsigned char)r->err[i] < 0x20 || r->err[i] == 0x7f ? ' ' : r->err[i];
	line[k] = '\0';
	snprintf(buf, len, " (stderr: %.200s)", line);
}

static int warn(struct dc_verify_run *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int warn(struct dc_verify_run *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* Cleaned: it may quote the helper (its error, a garbled line). */
	const char *text = dc_strings_pushv(&v->warnings, 1024, 1, fmt, ap);
	va_end(ap);
	if (!text)
		return -1;
	if (!v->quiet)
		dc_warning_emit(text);
	return 0;
}

static struct dc_verify_run *run_new(int n)
{
	struct dc_verify_run *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->n = n;
	if (n > 0) {
		size_t nn = (size_t)n * (size_t)n;
		v->status = malloc(nn);
		v->pairs = calloc(nn, sizeof(*v->pairs));
		if (!v->status || !v->pairs) {
			run_free(v);
			return NULL;
		}
		for (size_t k = 0; k < nn; k++)
			v->status[k] = (unsigned char)(k / (size_t)n == k % (size_t)n
							       ? DMACONN_VERIFY_NO_PEER
							       : DMACONN_VERIFY_FAIL);
	}
	return v;
}

/* Compares with NVML's "cuda"/"p2p" matrix (1: read, write and atomics
 * all OK), when that detector exists and sees the same GPUs. */
static int cross_check(struct dc_verify_run *v)
{
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "p2p", &r);
	if (rc == DMACONN_ENODETECTOR)
		return 0;
	if (rc == DMACONN_ENOMEM)
		return -1;
	if (rc != DMACONN_OK)
		return warn(v, "cuda verify: no cross-check with NVML: %s", dmaconn_last_error());
	int n = dmaconn_result_size(r), fail = 0;
	if (n == 0) {
		/* NVML sees nothing (absent, or no GPU): its detector has warned. */
	} else if (n != v->n) {
		fail = warn(v, "cuda verify: NVML sees %d GPUs but the functional check %d; "
			       "not cross-checked",
			    n, v->n);
	} else {
		for (int i = 0; i < n; i++) {
			const char *a = dmaconn_result_device_get(r, i, "pci_bus_id");
			const char *b = v->pci[i];
			if (a && b && strcasecmp(a, b) != 0) {
				fail = warn(v, "cuda verify: GPU %d is %s for the CUDA driver but %s for "
					       "NVML; not cross-checked",
					    i, b, a);
				n = 0;
				break;
			}
		}
		for (int i = 0; i < n && !fail; i++) {
			for (int j = 0; j < n && !fail; j++) {
				if (i == j)
					continue;
				int nvml = dmaconn_result_get(r, i, j) != 0;
				dmaconn_verify_status st = run_status(v, i, j);
				if (nvml == (st == DMACONN_VERIFY_PASS))
					continue;
				const char *rd = dmaconn_result_pair_get(r, i, j, "read");
				const char *wr = dmaconn_result_pair_get(r, i, j, "write");
				const char *at = dmaconn_result_pair_get(r, i, j, "atomics");
				const char *why = dc_props_get(pair_props(v, i, j), "reason");
				if (!nvml)
					fail = warn(v, "cuda verify: GPU %d -> %d: NVML reports no full peer "
						       "access (read %s, write %s, atomics %s) but the "
						       "functional check passed",
						    i, j, rd ? rd : "?", wr ? wr : "?", at ? at : "?");
				else
					fail = warn(v, "cuda verify: GPU %d -> %d: NVML reports peer read, "
						       "write and atomics but the functional check %s: %s",
						    i, j, st == DMACONN_VERIFY_NO_PEER ? "found no peer access" : "failed",
						    why ? why : "no reason given");
			}
		}
	}
	dmaconn_result_release(r);
	return fail;
}

/* Why a run of the helper failed as a whole, in why; nothing when it
 * reported (pair_hung aside, which the caller handles). */
static void run_failure(const struct run *run, const struct parsed *parsed, int timeout_ms,
			char *why, size_t whylen)
{
	char note[256];
	stderr_note(run, note, sizeof(note));
	if (run->timed_out)
		snprintf(why, whylen, "the verify helper timed out after %d ms and was killed",
			 timeout_ms);
	else if (run->too_much)
		snprintf(why, whylen, "the verify helper wrote more than %u bytes and was killed",
			 MAX_OUTPUT);
	else if (run->pair_hung)
		return;
	else if (!run->status_known)
		/* Fail closed: a full report followed by a crash is no pass. */
		snprintf(why, whylen, "the verify helper's exit status could not be seen (%s); its "
				      "report is not trusted",
			 run->status_lost ? "another part of this process reaped it"
					  : "it was not waited for");
	else if (run->signaled)
		snprintf(why, whylen, "the verify helper was killed by signal %d (%s)%s", run->sig,
			 signal_name(run->sig), note);
	else if (parsed->error)
		snprintf(why, whylen, "the verify helper could not check the GPUs: %s", parsed->error);
	else if (run->exited && run->code != 0)
		snprintf(why, whylen, "the verify helper exited with status %d%s", run->code, note);
	else if (parsed->garbled[0])
		snprintf(why, whylen, "the verify helper's output is garbled: %s", parsed->garbled);
	else if (!parsed->done)
		snprintf(why, whylen, "the verify helper's output ended before its 'done' record%s",
			 note);
	else if (parsed->done_pairs != parsed->npairs)
		snprintf(why, whylen, "the verify helper reported %d pairs but announced %d",
			 parsed->npairs, parsed->done_pairs);
}

/* Appends rec (whose properties it takes); -2 when out of memory. */
static int push_pair(struct parsed *p, struct pair_rec *rec)
{
	if (dc_grow(&p->pairs, p->npairs, &p->pair_cap, sizeof(*p->pairs), 16) != 0)
		return -2;
	p->pairs[p->npairs++] = *rec;
	memset(&rec->props, 0, sizeof(rec->props));
	return 0;
}

/* Appends a record for a pair that hung; -2 when out of memory. */
static int add_hung(struct parsed *p, int from, int to, int pair_timeout_ms)
{
	struct pair_rec rec = { .from = from, .to = to, .status = DMACONN_VERIFY_FAIL };
	char why[160];
	snprintf(why, sizeof(why), "hung: GPU %d -> %d did not finish within %d ms; the helper was "
				   "killed and restarted for the other pairs",
		 from, to, pair_timeout_ms);
	if (dc_props_set(&rec.props, "hang", "1") != 0 ||
	    dc_props_set(&rec.props, "reason", why) != 0 || push_pair(p, &rec) != 0) {
		dc_props_clear(&rec.props);
		return -2;
	}
	return 0;
}

/*
 * Runs the helper over every pair, restarting it after a pair that hangs,
 * into *all; why is set when the run as a whole failed.  -2 when out of
 * memory, else 0.
 */
static int run_all(const char *path, int timeout_ms, int pair_timeout_ms, struct parsed *all,
		   char *why, size_t whylen)
{
	long long deadline = now_ms() + timeout_ms;
	char after[32] = "";
	int first = 1;
	struct progress prog = { 0, 0 };
	for (;;) {
		struct run run;
		struct parsed part;
		memset(&run, 0, sizeof(run));
		run.prog = &prog;
		memset(&part, 0, sizeof(part));
		parsed_clear(&part);
		struct parsed *p = first ? all : &part;
		int ran = run_helper(path, first ? NULL : after, deadline, pair_timeout_ms, &run, why,
				     whylen);
		int rc = 0;
		if (ran == -2 || (ran == 0 && run.len > 0 && parse_output(p, run.out, run.len) == -2))
			rc = -2;
		else if (ran == 0)
			run_failure(&run, p, timeout_ms, why, whylen);
		free(run.out);
		if (rc == 0 && !why[0] && !first) {
			if (part.ndev != all->ndev) {
				snprintf(why, whylen, "the restarted verify helper saw %d GPUs, not %d",
					 part.ndev, all->ndev);
			} else {
				for (int k = 0; k < part.npairs && rc == 0; k++)
					rc = push_pair(all, &part.pairs[k]);
				all->done = part.done;
				all->done_pairs += part.done_pairs;
				all->open_from = part.open_from;
				all->open_to = part.open_to;
			}
		}
		parsed_clear(&part);
		if (rc != 0 || why[0] || !run.pair_hung)
			return rc;
		if (all->open_from < 0) {
			snprintf(why, whylen, "the verify helper stopped answering outside a pair");
			return 0;
		}
		if (add_hung(all, all->open_from, all->open_to, pair_timeout_ms) != 0)
			return -2;
		all->done_pairs++; /* the hung pair counts as reported */
		prog.done++;
		progress_report(&prog);
		snprintf(after, sizeof(after), "%d:%d", all->open_from, all->open_to);
		all->open_from = all->open_to = -1;
		first = 0;
		if (now_ms() >= deadline) {
			snprintf(why, whylen, "the verify helper timed out after %d ms and was killed",
				 timeout_ms);
			return 0;
		}
	}
}

/* The per-pair timeout: DMACONN_VERIFY_PAIR_TIMEOUT_MS, else a tenth of
 * the whole run's, at least 10 s and never more than the whole. */
static int pair_timeout(int timeout_ms)
{
	const char *env = secure_getenv("DMACONN_VERIFY_PAIR_TIMEOUT_MS");
	int t;
	if (env && parse_int(env, INT_MAX, &t) == 0 && t > 0)
		return t < timeout_ms ? t : timeout_ms;
	t = timeout_ms / 10 > 10000 ? timeout_ms / 10 : 10000;
	return t < timeout_ms ? t : timeout_ms;
}

/* Runs the helper over every pair into a new *out; see dc_verify_cuda(). */
static int run_cuda(int timeout_ms, int quiet, struct dc_verify_run **out)
{
	*out = NULL;
	if (timeout_ms <= 0)
		timeout_ms = DEFAULT_TIMEOUT_MS;
	char path[4096], why[1024] = "";
	struct parsed parsed;
	memset(&parsed, 0, sizeof(parsed));
	parsed_clear(&parsed);
	struct dc_verify_run *v = NULL;
	char *reported = NULL;
	int rc = DMACONN_ENOMEM;

	if (find_helper(path, sizeof(path), why, sizeof(why)) == 0 &&
	    run_all(path, timeout_ms, pair_timeout(timeout_ms), &parsed, why, sizeof(why)) == -2)
		goto done;

	int n = parsed.ndev;
	if (!(v = run_new(n)))
		goto done;
	v->quiet = quiet;
	v->failed = why[0] != '\0';
	if (n > 0 && !(v->pci = calloc((size_t)n, sizeof(*v->pci))))
		goto done;
	for (int i = 0; i < n; i++) {
		v->pci[i] = parsed.pci[i];
		parsed.pci[i] = NULL;
	}
	if (n > 0 && !(reported = calloc((size_t)n * (size_t)n, 1)))
		goto done;
	for (int k = 0; k < parsed.npairs; k++) {
		struct pair_rec *pr = &parsed.pairs[k];
		size_t at = (size_t)pr->from * (size_t)n + (size_t)pr->to;
		reported[at] = 1;
		v->status[at] = (unsigned char)pr->status;
		dc_props_clear(&v->pairs[at]);
		v->pairs[at] = pr->props;
		memset(&pr->props, 0, sizeof(pr->props));
	}
	if (why[0]) {
		/* The run failed: every pair fails with the reason. */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j) {
					v->status[(size_t)i * (size_t)n + (size_t)j] = DMACONN_VERIFY_FAIL;
					if (props_set_clean(&v->pairs[(size_t)i * (size_t)n + (size_t)j],
							    "reason", why) != 0)
						goto done;
				}
		if (warn(v, "cuda verify: %s; %s", why,
			 n > 0 ? "every pair is marked failed" : "no GPU was checked") != 0)
			goto done;
	} else {
		int missing = 0, hung = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				struct dc_props *pp = &v->pairs[(size_t)i * (size_t)n + (size_t)j];
				if (i != j && reported[(size_t)i * (size_t)n + (size_t)j])
					hung += dc_props_get(pp, "hang") != NULL;
				if (i == j || reported[(size_t)i * (size_t)n + (size_t)j])
					continue;
				missing++;
				if (dc_props_set(pp, "reason", "the verify helper did not report this pair") != 0)
					goto done;
			}
		if (missing && warn(v, "cuda verify: the verify helper did not report %d pairs", missing) != 0)
			goto done;
		if (hung && warn(v, "cuda verify: %d pair%s hung and %s marked failed", hung,
				 hung == 1 ? "" : "s", hung == 1 ? "is" : "are") != 0)
			goto done;
	}
	*out = v;
	v = NULL;
	rc = DMACONN_OK;
done:
	free(reported);
	parsed_clear(&parsed);
	run_free(v);
	return rc;
}

/* Copies the run v into b: see dmaconn_verify_run(). */
static int verify_to_result(dmaconn_builder *b, void *arg)
{
	const struct dc_verify_run *v = arg;
	int n = v->n, rc = dmaconn_builder_set_size(b, n);
	for (int i = 0; i < n && rc == DMACONN_OK; i++) {
		if (v->pci[i])
			rc = dmaconn_builder_set_device_property(b, i, DMACONN_PROP_PCI_BUS_ID, v->pci[i]);
		for (int j = 0; j < n && rc == DMACONN_OK; j++) {
			if (i == j)
				continue;
			dmaconn_verify_status st = run_status(v, i, j);
			const struct dc_props *p = pair_props(v, i, j);
			rc = dmaconn_builder_set(b, i, j, st == DMACONN_VERIFY_PASS);
			if (rc == DMACONN_OK)
				rc = dmaconn_builder_set_pair_property(b, i, j, "status", status_names[st]);
			for (int k = 0; k < dc_props_count(p) && rc == DMACONN_OK; k++)
				rc = dmaconn_builder_set_pair_property(b, i, j, dc_props_key_at(p, k),
								       dc_props_value_at(p, k));
		}
	}
	/* Sent to the sink when the run made them, unless it was quiet. */
	for (int k = 0; k < v->warnings.count && rc == DMACONN_OK; k++)
		rc = dmaconn_builder_add_warning(b, dc_strings_at(&v->warnings, k));
	return rc;
}

/* The run as a result (connection "verify"); DMACONN_OK or an error of
 * dmaconn_result_build(). */
static int run_result(dmaconn_device_type type, struct dc_verify_run *v, dmaconn_result **out)
{
	int rc = dmaconn_result_build(type, "verify", verify_to_result, v, out);
	run_free(v);
	return rc;
}

int dc_verify_cuda(int timeout_ms, int quiet, dmaconn_result **out, int *failed)
{
	struct dc_verify_run *v = NULL;
	*out = NULL;
	*failed = 1;
	if (run_cuda(timeout_ms, quiet, &v) != DMACONN_OK)
		return DMACONN_ENOMEM;
	*failed = v->failed;
	return run_result(DMACONN_DEVICE_CUDA, v, out);
}

int dmaconn_verify_run(dmaconn_device_type type, int timeout_ms, dmaconn_result **out)
{
	if (!out)
		return dc_fail(DMACONN_EINVAL, "NULL result pointer");
	*out = NULL;
	if (!dmaconn_device_type_name(type))
		return dc_fail(DMACONN_EINVAL, "unknown device type %d", (int)type);
	if (type != DMACONN_DEVICE_CUDA)
		return dc_fail(DMACONN_EUNAVAILABLE, "no functional check for %s devices (only cuda)",
			       dmaconn_device_type_name(type));
	if (timeout_ms < 0)
		return dc_fail(DMACONN_EINVAL, "negative timeout %d ms", timeout_ms);
	struct dc_verify_run *v = NULL;
	if (run_cuda(timeout_ms, 0, &v) != DMACONN_OK)
		return dc_fail(DMACONN_ENOMEM, "out of memory while verifying cuda peer access");
	if (v->n > 0 && !v->failed && cross_check(v) != 0) {
		run_free(v);
		return dc_fail(DMACONN_ENOMEM, "out of memory while verifying cuda peer access");
	}
	int rc = run_result(type, v, out);
	if (rc == DMACONN_OK)
		dc_fail(DMACONN_OK, "%s", "");
	return rc;
}

int dmaconn_verify(dmaconn_device_type type, int timeout_ms, dmaconn_verify_result **out)
{
	if (!out)
		return dc_fail(DMACONN_EINVAL, "NULL result pointer");
	*out = NULL;
	dmaconn_verify_result *v = calloc(1, sizeof(*v));
	if (!v)
		return dc_fail(DMACONN_ENOMEM, "out of memory while verifying cuda peer access");
	int rc = dmaconn_verify_run(type, timeout_ms, &v->r);
	if (rc != DMACONN_OK) {
		free(v);
		return rc;
	}
	*out = v;
	return DMACONN_OK;
}
