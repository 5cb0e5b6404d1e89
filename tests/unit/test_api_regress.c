/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu compare and vkcu verify as a client calls them (the command line
 * does, through include/vkcu/regress.h only): the defaults, a clip against
 * its reference framemd5 and against a list with one hash changed, a
 * manifest of a passing and a failing case (its lines, totals, case filter
 * and JUnit report), and the return codes of missing inputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264"
#define REF CLIP ".framemd5"

static char dir[64];

/* dir/name holding text; its path in buf. */
static const char *put(const char *name, const char *text, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", dir, name);
    FILE *f = fopen(buf, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", buf);
    return buf;
}

/* The reference list of CLIP, with the hash of its second frame changed
 * when `spoil` is set. */
static char *reference(int spoil)
{
    FILE *f = fopen(REF, "r");
    CHECK(f, "cannot read %s", REF);
    if (!f)
        return NULL;
    static char text[8192];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    char *second = strstr(text, "\n0,          1,");
    CHECK(second, "%s lacks its second frame", REF);
    if (spoil && second) {
        char *eol = strchr(second + 1, '\n');
        CHECK(eol && eol[-1] != '0', "unexpected line in %s", REF);
        if (eol)
            eol[-1] = eol[-1] == '0' ? '1' : '0';
    }
    return text;
}

static void test_defaults(void)
{
    vkcu_compare_job c;
    memset(&c, 0x5a, sizeof(c));
    vkcu_default_compare_job(&c);
    CHECK(!c.a && !c.b && !c.chain && !c.report && !c.diff_image && !c.csv && !c.json && !c.report_html,
          "compare job: strings and streams not cleared");
    CHECK(c.start_time == -1 && c.duration == -1 && c.start_frame == -1 && c.frame_count == -1 && c.max_frames == 0,
          "compare job: trims set");
    CHECK(c.max_diff == -1 && c.min_psnr < 0 && c.min_vmaf < 0 && !c.vmaf && !c.overwrite &&
          c.timing == VKCU_TIMING_FFMPEG && !c.exclude_concealed, "compare job: limits set");
    vkcu_verify_job v;
    memset(&v, 0x5a, sizeof(v));
    vkcu_default_verify_job(&v);
    CHECK(!v.manifests && !v.nb_manifests && !v.cases && v.out == stdout && v.jobs == 1 && v.timeout == 0 &&
          !v.fail_fast && !v.update && !v.allow_outside && !v.junit && !v.summary && !v.html && !v.overwrite &&
          !v.override_backend && v.timing == VKCU_TIMING_FFMPEG, "verify job: defaults");
}

static void test_compare(vkcu_context *ctx)
{
    char good[128], bad[128];
    const char *text = reference(0);
    if (!text)
        return;
    put("good.framemd5", text, good, sizeof(good));
    put("bad.framemd5", reference(1), bad, sizeof(bad));

    vkcu_compare_job j;
    vkcu_compare_result r;
    vkcu_default_compare_job(&j);
    j.a = CLIP;
    j.b = good;
    int ret = vkcu_compare(ctx, &j, &r);
    CHECK(ret == 0 && r.pass && r.frames_a == 3 && r.frames_b == 3 && r.paired == 3 && r.differing == 0 &&
          r.first_diff == -1 && strstr(r.verdict, "IDENTICAL"), "clip against its reference: %d, %lld paired, '%s' %s",
          ret, (long long)r.paired, r.verdict, r.error);

    j.b = bad;
    ret = vkcu_compare(ctx, &j, &r);
    CHECK(ret == VKCU_ERR_MISMATCH && !r.pass && r.paired == 3 && r.differing == 1 && r.first_diff == 1 &&
          strstr(r.verdict, "MISMATCH") && !r.error[0], "one hash changed: %d, %lld differ, first %lld, '%s' %s", ret,
          (long long)r.differing, (long long)r.first_diff, r.verdict, r.error);

    char missing[128];
    snprintf(missing, sizeof(missing), "%s/missing.h264", dir);
    j.a = missing;
    ret = vkcu_compare(ctx, &j, &r);
    CHECK(ret == VKCU_ERR_INPUT && strstr(r.error, "missing.h264"), "missing input: %d, '%s'", ret, r.error);

    vkcu_default_compare_job(&j);
    j.a = CLIP;
    ret = vkcu_compare(ctx, &j, &r);
    CHECK(ret == -EINVAL && r.error[0], "no b: %d, '%s'", ret, r.error);
    unlink(good);
    unlink(bad);
}

static void test_verify(vkcu_context *ctx)
{
    char good[128], bad[128], manifest[128], junit[128], out_path[128], clip[4096];
    const char *text = reference(0);
    if (!text || !realpath(CLIP, clip))
        return;
    put("good.framemd5", text, good, sizeof(good));
    put("bad.framemd5", reference(1), bad, sizeof(bad));
    char m[8192 + 256];
    snprintf(m, sizeof(m),
             "# two cases of one clip\nvkcu-manifest 1\n\n[case clip]\ninput = %s\nhashes = good.framemd5\n\n"
             "[case changed]\ninput = %s\nhashes = bad.framemd5\n",
             clip, clip);
    put("cases.manifest", m, manifest, sizeof(manifest));
    snprintf(junit, sizeof(junit), "%s/results.xml", dir);
    snprintf(out_path, sizeof(out_path), "%s/lines.txt", dir);

    const char *manifests[] = { manifest };
    vkcu_verify_job v;
    vkcu_default_verify_job(&v);
    v.manifests = manifests;
    v.nb_manifests = 1;
    v.junit = junit;
    FILE *out = fopen(out_path, "w+");
    CHECK(out, "cannot write %s", out_path);
    if (!out)
        return;
    v.out = out;
    int ret = vkcu_verify(ctx, &v);
    char lines[4096] = "";
    rewind(out);
    lines[fread(lines, 1, sizeof(lines) - 1, out)] = 0;
    CHECK(ret == VKCU_ERR_MISMATCH, "a failing case: returned %d", ret);
    CHECK(strstr(lines, "PASS clip:") && strstr(lines, "FAIL changed:") && strstr(lines, "1 passed, 1 failed"),
          "lines:\n%s", lines);
    FILE *x = fopen(junit, "r");
    char xml[8192] = "";
    if (x) {
        xml[fread(xml, 1, sizeof(xml) - 1, x)] = 0;
        fclose(x);
    }
    CHECK(strstr(xml, "<testcase") && strstr(xml, "clip") && strstr(xml, "<failure"), "JUnit report: '%.300s'", xml);

    /* The report exists now: refused before any case, unless overwrite. */
    ret = vkcu_verify(ctx, &v);
    CHECK(ret == VKCU_ERR_OUTPUT, "an existing JUnit file without overwrite: %d", ret);

    const char *only[] = { "cl*" };
    v.cases = only;
    v.nb_cases = 1;
    v.junit = NULL;
    rewind(out);
    ret = vkcu_verify(ctx, &v);
    CHECK(ret == 0, "the passing case alone: %d", ret);

    char missing[128];
    snprintf(missing, sizeof(missing), "%s/none.manifest", dir);
    manifests[0] = missing;
    ret = vkcu_verify(ctx, &v);
    CHECK(ret == VKCU_ERR_INPUT, "a missing manifest: %d", ret);
    v.nb_manifests = 0;
    ret = vkcu_verify(ctx, &v);
    CHECK(ret == -EINVAL, "no manifest: %d", ret);
    fclose(out);
    unlink(good);
    unlink(bad);
    unlink(manifest);
    unlink(junit);
    unlink(out_path);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "%s", "/tmp/vkcu-test-regress-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL: no temporary folder\n");
        return 1;
    }
    test_defaults();
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_level = VKCU_LOG_QUIET;
    vkcu_context *ctx = NULL;
    CHECK(vkcu_open(&ctx, &s) == 0, "vkcu_open");
    if (ctx) {
        test_compare(ctx);
        test_verify(ctx);
    }
    vkcu_close(&ctx);
    CHECK(rmdir(dir) == 0, "%s not empty afterwards", dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: compare and verify defaults, verdicts, reports and return codes\n");
    return tu_failures ? 1 : 0;
}
