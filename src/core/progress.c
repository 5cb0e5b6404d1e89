/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Progress reports of a job, at most 4 a second: to the job's progress
 * callback, or, without one, the progress line on a terminal: frames (of
 * the expected total), fps, speed (times realtime) and ETA on stderr,
 * never when stderr is not a terminal (logs and pipes stay clean).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/stage.h"

/* 1 while a progress line is drawn without its newline. */
static atomic_int line_open;

void vkcu_progress_init(vkcu_progress *p, int enabled, int64_t total, const char *label)
{
    p->enabled = enabled && (p->callback || isatty(STDERR_FILENO));
    p->start = vkcu_now();
    p->last = 0;
    p->total = p->expected > 0 ? p->expected : total;
    p->label = label;
}

static void clock_str(char *buf, size_t n, double seconds)
{
    int s = (int)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, n, "%d:%02d", s / 60, s % 60);
}

void vkcu_progress_update(vkcu_progress *p, int64_t frames, int final)
{
    if (!p->enabled)
        return;
    double now = vkcu_now();
    if (!final && now - p->last < 0.25)
        return;
    p->last = now;
    double el = now - p->start;
    vkcu_progress_info info = {
        .input = p->label,
        .frames = frames,
        .expected = p->total > 0 ? p->total : 0,
        .elapsed = el,
        .fps = el > 0 ? frames / el : 0,
        .rate = p->rate,
        .final = final,
    };
    if (p->callback)
        p->callback(p->opaque, &info);
    else
        vkcu_progress_draw(&info);
}

void vkcu_progress_draw(const vkcu_progress_info *info)
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

void vkcu_progress_break_line(void)
{
    if (atomic_exchange(&line_open, 0)) {
        fputc('\n', stderr);
        fflush(stderr);
    }
}
