/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files (outfile.c): the one rule every file vkcu writes follows,
 * its temporary names, confined writes and batch claims.
 */
#ifndef VKCU_CORE_OUTFILE_H
#define VKCU_CORE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <vkcu/common.h> /* VKCU_ERR_* */

/* Every file vkcu writes follows one rule (outfile.c): an existing file
 * is refused unless `overwrite`; a file that is one of `inputs` (NULL-
 * terminated paths; the same file under any name or link) is refused
 * even with `overwrite`; the file appears only complete. "-" is standard
 * output (tmp is set to "-": open it with vkcu_outfile_fopen), refused
 * when it is redirected onto an input; files that
 * are not regular are written in place (tmp is set to path). A dangling
 * symbolic link is refused without overwrite.
 * Errors are VKCU_ERR_OUTPUT with a one-line message in err. */
int vkcu_outfile_check(const char *path, int overwrite, const char *const *inputs, char *err, size_t errlen);
/* For a numbered sequence of files (an image output "f%03d.png": one %d,
 * optionally %0Nd): the rule for every file of the sequence, checked
 * before the first is written: without `overwrite`, a file of the folder
 * whose name fits the pattern (f001.png, f1234.png) refuses the job
 * (VKCU_ERR_OUTPUT, err names it). Each file is then written with
 * vkcu_outfile_begin/commit under its own name. */
int vkcu_outfile_check_sequence(const char *pattern, int overwrite, const char *const *inputs, char *err,
                                size_t errlen);
/* 1 when path exists and is one of inputs (*which: the input's name).
 * An input "-" is standard input: the file it is redirected from, when it
 * is a regular file. */
int vkcu_outfile_is_input(const char *path, const char *const *inputs, const char **which);
/* VKCU_ERR_OUTPUT (err: "WHAT is the same file as ...") when the open
 * descriptor fd is a regular file that is one of inputs: standard output
 * redirected onto an input (`>> in.mkv`), a caller's stream. Else 0.
 * vkcu_outfile_check applies it to standard output for "-". */
int vkcu_outfile_check_fd(int fd, const char *what, const char *const *inputs, char *err, size_t errlen);
/* A short temporary name beside `path` (created, empty) to write to;
 * also removes dead processes' leftovers in that folder. */
int vkcu_outfile_begin(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                       char *err, size_t errlen);
/* The same, but the temporary is only named, not created: for a file that
 * another library creates under that name (an encoder's statistics). */
int vkcu_outfile_reserve(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                         char *err, size_t errlen);
/* Registers the temporary name `tmp` (not created) for `path`, checked by
 * the rule; path NULL: a name removed on failure or signal, never
 * published (an encoder's own scratch files beside a reserved name). */
int vkcu_outfile_reserve_as(const char *tmp, const char *path, int overwrite, const char *const *inputs, char *err,
                            size_t errlen);
/* fopen() of what vkcu_outfile_begin returned; "-": a new stream on a
 * duplicate of standard output. NULL with errno on failure. */
FILE *vkcu_outfile_fopen(const char *tmp, const char *mode);
/* fclose() of a vkcu_outfile_fopen stream: 0, or -1 with errno when what
 * was written did not all arrive. On standard output a reader that went
 * away (| head) is no error: it has what it wanted. */
int vkcu_outfile_fclose(FILE *f, const char *tmp);
/* VKCU_ERR_USAGE (err names `what`) when path is "-" and standard output
 * is a terminal: for binary outputs (PNG). Else 0. */
int vkcu_outfile_not_terminal(const char *path, const char *what, char *err, size_t errlen);
/* fsync, move into place (never replacing a file without overwrite: a
 * file that appeared meanwhile fails the commit), fsync the folder. On
 * failure the temporary is removed. */
int vkcu_outfile_commit(const char *tmp, const char *path, char *err, size_t errlen);
void vkcu_outfile_abort(const char *tmp);
/* A confined writer: `len` bytes of `data` to `rel`, a path relative to the
 * folder rootfd (held open by the caller), under the rule above. The
 * file's folder is resolved below rootfd when the file is written, so a
 * link swapped in meanwhile cannot lead the write out of it (EXDEV: an
 * error naming `shown`, what messages call the file). */
int vkcu_outfile_write_at(int rootfd, const char *rel, const char *shown, const void *data, size_t len, int overwrite,
                          const char *const *inputs, char *err, size_t errlen);
/* Removes every temporary output and claim of the process. Async-signal-
 * safe: for signal handlers and immediate exits. */
void vkcu_outfile_abort_all(void);
/* Removes temporaries of processes that no longer exist from the folder
 * of `path` (once per folder and process), with a warning naming each. */
void vkcu_outfile_clean_beside(const char *path);
/* Removes the temporaries of process `pid`, which has ended (a batch's
 * worker process that died), and unheld claims, from the folder of `path`,
 * silently: the caller says what became of the file. */
void vkcu_outfile_clean_process(const char *path, long pid);
/* Batch claims: 1 when this process now owns the work of writing `path`
 * (*fd set), 0 when another process does (*holder: its pid, 0 unknown),
 * <0 on error. The claim ends with vkcu_outfile_release, or with the
 * process (an flock). */
int vkcu_outfile_claim(const char *path, int *fd, long *holder, char *err, size_t errlen);
void vkcu_outfile_release(const char *path, int fd);

#endif
