/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The terminal's progress line of a job: frames (of the expected total),
 * fps, speed (times realtime) and ETA on stderr, redrawn in place from the
 * library's progress reports (only when stderr is a terminal: cli_run.c
 * asks for reports then, so logs and pipes stay clean).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "cli.h"

/* 1 while a progress line is drawn without its newline. */
static atomic_int line_open;

static void clock_str(char *buf, size_t n, double seconds)
{
    int s = (int)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, n, "%d:%02d", s / 60, s % 60);
}

void cli_progress_draw(const vkcu_progress_info *info)
{
    int64_t frames = info->frames;
    double fps = info->fps;
    char eta[32] = "--:--", speed[32] = "";
    if (info->final)
        clock_str(eta, sizeof(eta), 0);
    else if (info->expected > frames && fps > 0)
        clock_str(eta, sizeof(eta), (info->expected - frames) / fps);
    if (info->rate > 0 && fps > 0)
        snprintf(speed, sizeof(speed), "  %.2fx", fps / info->rate);
    char total[32] = "";
    if (info->expected > 0)
        snprintf(total, sizeof(total), "/%lld",
                 (long long)(info->final && frames > info->expected ? frames : info->expected));
    /* \033[K clears what a longer previous line left. */
    fprintf(stderr, "\r%s: frame %lld%s  %.1f fps%s  ETA %s\033[K", info->input, (long long)frames, total, fps, speed,
            eta);
    if (info->final)
        fputc('\n', stderr);
    atomic_store(&line_open, !info->final);
    fflush(stderr);
}

void cli_progress_break_line(void)
{
    if (atomic_exchange(&line_open, 0)) {
        fputc('\n', stderr);
        fflush(stderr);
    }
}
