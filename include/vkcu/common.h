/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: what every other public header needs. The export
 * attribute, the error convention and exit statuses, log levels, the log
 * and setting-name callbacks, the stop request.
 *
 * Error convention. Every call that can fail returns 0 on success or a
 * negative value:
 *   - a negative errno: -EINVAL (an argument or setting is out of range or
 *     inconsistent; nothing was started), -ENOMEM, -EIO, -ENOENT, ...
 *     FFmpeg's AVERROR() codes are negative errno values too, and the
 *     library passes FFmpeg's own error tags (AVERROR_EOF,
 *     AVERROR_INVALIDDATA, ...) through unchanged;
 *   - one of VKCU_ERR_* below, when the failure belongs to a class that a
 *     program usually reports differently (bad input, output not writable,
 *     no usable GPU, a regression mismatch, a stop request).
 * vkcu_error_string() turns any of them into text. Whenever a call fails,
 * the library also sends one line saying what failed and why (naming the
 * file, frame or setting) to the log callback at VKCU_LOG_ERROR, and calls
 * that have a result struct copy that line into it.
 *
 * The library never ends the process and never writes to the standard
 * streams on its own: messages go to the log callback (when none is set,
 * to standard error, prefixed "vkcu: ").
 */
#ifndef VKCU_COMMON_H
#define VKCU_COMMON_H

#include <stddef.h>

/* Marks the declarations that libvkcu exports. Everything else in the
 * library is built with hidden visibility. */
#ifndef VKCU_API
#if defined(__GNUC__) || defined(__clang__)
#define VKCU_API __attribute__((visibility("default")))
#else
#define VKCU_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Failure classes beyond errno. The values are negative and lie outside
 * both errno's range and FFmpeg's error tags. */
#define VKCU_ERR_USAGE       (-0x56430001) /* a request the library cannot honour as given */
#define VKCU_ERR_INPUT       (-0x56430002) /* input missing, empty, corrupt or unsupported */
#define VKCU_ERR_OUTPUT      (-0x56430003) /* an output cannot be written (exists, disk full, no permission) */
#define VKCU_ERR_DEVICE      (-0x56430004) /* no usable GPU, device lost, decoder stalled */
#define VKCU_ERR_MISMATCH    (-0x56430005) /* compare or verify found a difference */
#define VKCU_ERR_INTERRUPT   (-0x56430006) /* stopped by vkcu_request_stop() */
#define VKCU_ERR_PIPE_CLOSED (-0x56430007) /* the reader of a pipe output went away (not a failure of the job) */

/* The exit status a command-line program gives for a result, as the vkcu
 * command does (its README lists them) and the batch report's exit_code
 * records them (vkcu_exit_code). */
enum vkcu_exit {
    VKCU_EXIT_OK = 0,
    VKCU_EXIT_FAIL = 1,      /* anything else */
    VKCU_EXIT_USAGE = 2,     /* VKCU_ERR_USAGE (the vkcu command also counts -EINVAL here) */
    VKCU_EXIT_INPUT = 3,     /* VKCU_ERR_INPUT */
    VKCU_EXIT_OUTPUT = 4,    /* VKCU_ERR_OUTPUT */
    VKCU_EXIT_DEVICE = 5,    /* VKCU_ERR_DEVICE */
    VKCU_EXIT_MISMATCH = 6,  /* VKCU_ERR_MISMATCH */
    VKCU_EXIT_INTERRUPT = 130, /* VKCU_ERR_INTERRUPT, as a shell reports SIGINT */
};

/**
 * Maps a result to an exit status.
 *
 * @param err 0, a negative errno, an FFmpeg AVERROR code or a VKCU_ERR_* value.
 * @return an enum vkcu_exit: VKCU_EXIT_OK for 0 and for VKCU_ERR_PIPE_CLOSED
 *         (the reader of standard output has what it wanted), the class's
 *         status for each VKCU_ERR_*, VKCU_EXIT_FAIL for any other error.
 * @note Thread-safe.
 */
VKCU_API int vkcu_exit_code(int err);

/**
 * Describes an error code.
 *
 * @param err  0, a negative errno, an FFmpeg AVERROR code or a VKCU_ERR_* value.
 * @param buf  receives the text, NUL-terminated; owned by the caller.
 * @param size size of buf in bytes (at least 1).
 * @return buf.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_error_string(int err, char *buf, size_t size);

enum vkcu_log_level {
    VKCU_LOG_QUIET = -1, /* as a threshold: nothing is delivered */
    VKCU_LOG_ERROR = 0,  /* the call is failing; one line says why */
    VKCU_LOG_WARNING,    /* the job goes on, but something was skipped or degraded */
    VKCU_LOG_INFO,       /* what the job chose (backend, path) */
    VKCU_LOG_VERBOSE,    /* each step, and each failing library call with file:line */
    VKCU_LOG_DEBUG,
};

/**
 * Receives the library's messages.
 *
 * @param opaque  the pointer given with the callback in the settings.
 * @param level   the message's level; only levels at or below the
 *                configured threshold are delivered.
 * @param message one line without a trailing newline, valid only during the
 *                call. It names files, frames and settings by what they
 *                are (a setting by its field name, unless a
 *                vkcu_setting_name_callback says otherwise), never by a
 *                command-line option. Lines that FFmpeg logs while it works
 *                for a job (demuxing, decoding, encoding on the job's own
 *                threads) come here too, starting "ffmpeg: ": FFmpeg's
 *                fatal errors at VKCU_LOG_ERROR, its errors at
 *                VKCU_LOG_VERBOSE, its warnings, info and verbose lines at
 *                VKCU_LOG_DEBUG (its debug lines are dropped), by the
 *                context's own threshold.
 * @note Called from any thread the library runs a job on, possibly from
 *       several at once: the callback must be thread-safe. It must not call
 *       back into the context that logged.
 */
typedef void (*vkcu_log_callback)(void *opaque, enum vkcu_log_level level, const char *message);

/**
 * Names a setting in a program's own vocabulary.
 *
 * Where the library's text (log messages, result->error, compare verdicts,
 * the lines and reports verify writes) tells what to change, it names the
 * field of a public struct: "ring_size", or "backend=gpu", "overwrite=1"
 * when it names a value too. A program that offers these settings
 * under other names (command-line options, configuration keys) sets this
 * callback, and its names are printed instead.
 *
 * @param opaque  the settings' log_opaque.
 * @param setting a field name of vkcu_settings, vkcu_job, vkcu_compare_job
 *                or vkcu_verify_job ("overwrite", "start_time" ...).
 * @param value   the value the text names with it ("gpu", "1" for a flag
 *                turned on, "index" ...), or NULL when it names none.
 * @param buf     where the name may be written, NUL-terminated.
 * @param size    buf's size in bytes.
 * @return the name to print (buf, or a string that outlives the context),
 *         or NULL to have the library's own name printed.
 * @note Called on the threads that log, like the log callback, while the
 *       text is made: it must be thread-safe and must not call the library.
 */
typedef const char *(*vkcu_setting_name_callback)(void *opaque, const char *setting, const char *value,
                                                  char *buf, size_t size);

/**
 * Sets the namer of the text that calls made outside a context write:
 * vkcu_probe()'s lines and vkcu_preset_load()'s errors, where they tell
 * which setting to change. Text made for a context uses its settings'
 * setting_name_callback instead.
 *
 * @param cb     the namer; NULL (the default): settings are named by their
 *               field names.
 * @param opaque passed to cb.
 * @note Process-wide: call it once, before other threads use the library;
 *       cb is then called on any thread that makes such text, so it must
 *       be thread-safe.
 */
VKCU_API void vkcu_set_setting_name_callback(vkcu_setting_name_callback cb, void *opaque);

/**
 * Asks every running job of the process to stop at its next frame; each
 * then returns VKCU_ERR_INTERRUPT after removing its partial outputs.
 *
 * @note Async-signal-safe and thread-safe: meant for SIGINT/SIGTERM
 *       handlers. The request is sticky for the life of the process.
 */
VKCU_API void vkcu_request_stop(void);

/**
 * @return 1 once vkcu_request_stop() was called, else 0.
 * @note Async-signal-safe and thread-safe.
 */
VKCU_API int vkcu_stop_requested(void);

/**
 * Removes the partial outputs of every running job of the process (the
 * temporaries that a finished job would have moved into place). For a
 * program about to end abnormally: from a signal handler, or from a
 * watchdog callback (job.h) before it exits. The jobs concerned fail when
 * they next write.
 *
 * @note Async-signal-safe and thread-safe.
 */
VKCU_API void vkcu_abandon_outputs(void);

#ifdef __cplusplus
}
#endif
#endif
