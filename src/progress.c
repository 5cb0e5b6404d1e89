/* The progress line on a terminal: frames, fps, speed-free ETA. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "stage.h"

double vkcu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void vkcu_progress_init(vkcu_progress *p, int enabled, int64_t total, const char *label)
{
    p->enabled = enabled && isatty(STDERR_FILENO);
    p->start = p->last = vkcu_now();
    p->total = total;
    p->label = label;
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
    double fps = el > 0 ? frames / el : 0;
    char eta[32] = "--:--";
    if (p->total > frames && fps > 0) {
        int s = (int)((p->total - frames) / fps);
        snprintf(eta, sizeof(eta), "%d:%02d", s / 60, s % 60);
    } else if (final) {
        snprintf(eta, sizeof(eta), "0:00");
    }
    if (p->total > 0)
        fprintf(stderr, "\r%s: frame %lld/%lld  %.1f fps  ETA %s   ", p->label, (long long)frames,
                (long long)p->total, fps, eta);
    else
        fprintf(stderr, "\r%s: frame %lld  %.1f fps   ", p->label, (long long)frames, fps);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}
