/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ring_size has one owner: vkcu_job_run takes VKCU_RING_SIZE_MIN..MAX and
 * refuses anything else with -EINVAL and a one-line message that names the
 * parameter and the range (never a CLI flag), before it opens the input;
 * it never clamps. (The CLI's --ring-size is tests/cli/ring-size.sh.)
 */
#include <errno.h>
#include <string.h>
#include <libavutil/error.h>

#include "test_util.h"
#include "core/vkcu.h"

int main(void)
{
    CHECK(VKCU_RING_SIZE_MIN == 3 && VKCU_RING_SIZE_MAX == 16 && VKCU_RING_SIZE_DEFAULT == 4,
          "range %d..%d default %d", VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX, VKCU_RING_SIZE_DEFAULT);
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    CHECK(p.settings.ring_size == VKCU_RING_SIZE_DEFAULT, "default ring_size %d", p.settings.ring_size);
    const int bad[] = { -1, 0, 2, 17, 1000 };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        vkcu_job_params_default(&p);
        p.settings.backend = VKCU_BACKEND_CPU;
        p.job.sink = VKCU_SINK_NULL;
        p.job.input = "/nonexistent/ring-size-test.mp4"; /* refused before the input is looked at */
        p.settings.ring_size = bad[i];
        vkcu_job_result r;
        int ret = vkcu_job_run(&p, &r);
        char want[128];
        snprintf(want, sizeof(want), "ring_size %d is not in [3, 16]", bad[i]);
        CHECK(ret == AVERROR(EINVAL), "ring_size %d: returned %d, expected -EINVAL", bad[i], ret);
        CHECK(strstr(r.error, want) != NULL, "ring_size %d: message '%s' lacks '%s'", bad[i], r.error, want);
        CHECK(!strchr(r.error, '\n') && !strstr(r.error, "--"), "ring_size %d: message '%s' is not one line free of CLI flags",
              bad[i], r.error);
    }
    /* In range: the job goes on and fails on the input instead. */
    for (int k = VKCU_RING_SIZE_MIN; k <= VKCU_RING_SIZE_MAX; k += VKCU_RING_SIZE_MAX - VKCU_RING_SIZE_MIN) {
        vkcu_job_params_default(&p);
        p.settings.backend = VKCU_BACKEND_CPU;
        p.job.sink = VKCU_SINK_NULL;
        p.job.input = "/nonexistent/ring-size-test.mp4";
        p.settings.ring_size = k;
        vkcu_job_result r;
        int ret = vkcu_job_run(&p, &r);
        CHECK(ret != AVERROR(EINVAL) && ret < 0 && !strstr(r.error, "ring_size"),
              "ring_size %d: returned %d (%s), expected the input's error", k, ret, r.error);
    }
    if (tu_failures)
        return 1;
    printf("ring_size: 3 and 16 taken, -1 0 2 17 1000 refused with -EINVAL\n");
    return 0;
}
