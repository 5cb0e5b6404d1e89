/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public preset and probe calls (include/vkcu/preset.h, probe.h) as a
 * program outside the library uses them: only <vkcu/vkcu.h>. Presets: the
 * listing (sorted, each name once, the first folder winning, hidden and
 * other files left out, a callback that stops it), loading by name and by
 * path, a broken file named with its line, a preset applied to a job (its
 * file then an input of the job: never written over, even with overwrite).
 * Probe: the report comes line by line and agrees with the summary and
 * with the CUDA device count (whatever this machine has).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

static int write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

typedef struct listed {
    int n, stop_at;
    char names[64][128];
    char paths[64][1024];
} listed;

static int on_preset(void *opaque, const char *name, const char *path)
{
    listed *l = opaque;
    if (l->n < 64) {
        snprintf(l->names[l->n], sizeof(l->names[l->n]), "%s", name);
        snprintf(l->paths[l->n], sizeof(l->paths[l->n]), "%s", path);
    }
    l->n++;
    return l->stop_at && l->n == l->stop_at ? 7 : 0;
}

static int find(const listed *l, const char *name)
{
    for (int i = 0; i < l->n && i < 64; i++)
        if (!strcmp(l->names[i], name))
            return i;
    return -1;
}

#define WEB "description Small web copy\n\nop scale=w=-2:h=36\nencoder libx264\ncrf 30\npreset fast\n" \
            "encoder-opt profile=high\ncontainer mp4\nfaststart yes\n"
#define HASH "description Hashes\n\noutput hash\nhash xxh64\nhash-format json\n"

static void test_presets(const char *dir)
{
    char one[600], two[600], env[1300];
    snprintf(one, sizeof(one), "%s/one", dir);
    snprintf(two, sizeof(two), "%s/two", dir);
    mkdir(one, 0777);
    mkdir(two, 0777);
    int ok = write_text(one, "zeta-web.pipe", WEB) == 0 && write_text(one, "alpha-hash.pipe", HASH) == 0 &&
             write_text(two, "zeta-web.pipe", HASH) == 0 && write_text(two, "mid.pipe", WEB) == 0 &&
             write_text(one, ".hidden.pipe", WEB) == 0 && write_text(one, "notes.txt", "no") == 0 &&
             write_text(one, "broken.pipe", "description Broken\nop nosuchop\n") == 0;
    CHECK(ok, "cannot write the presets under %s", dir);
    snprintf(env, sizeof(env), "%s:%s", one, two);
    setenv("VKCU_PIPELINES", env, 1);

    listed l;
    memset(&l, 0, sizeof(l));
    char err[1024] = "";
    int ret = vkcu_presets_list(on_preset, &l, err, sizeof(err));
    CHECK(ret == l.n && ret >= 4, "list returned %d, %d calls (%s)", ret, l.n, err);
    int a = find(&l, "alpha-hash"), b = find(&l, "broken"), m = find(&l, "mid"), z = find(&l, "zeta-web");
    CHECK(a >= 0 && b >= 0 && m >= 0 && z >= 0, "listed: alpha-hash %d, broken %d, mid %d, zeta-web %d", a, b, m, z);
    CHECK(find(&l, ".hidden") < 0 && find(&l, "notes") < 0 && find(&l, "notes.txt") < 0, "hidden or other files listed");
    for (int i = 1; i < l.n && i < 64; i++)
        CHECK(strcmp(l.names[i - 1], l.names[i]) < 0, "not sorted or listed twice: %s, %s", l.names[i - 1],
              l.names[i]);
    if (z >= 0)
        CHECK(strstr(l.paths[z], "/one/zeta-web.pipe"), "zeta-web from %s, not the first folder", l.paths[z]);
    if (m >= 0)
        CHECK(strstr(l.paths[m], "/two/mid.pipe"), "mid from %s", l.paths[m]);

    memset(&l, 0, sizeof(l));
    l.stop_at = 2;
    ret = vkcu_presets_list(on_preset, &l, NULL, 0);
    CHECK(ret == 7 && l.n == 2, "a stopping callback: returned %d after %d calls", ret, l.n);

    vkcu_preset ps;
    ret = vkcu_preset_load("zeta-web", &ps, err, sizeof(err));
    CHECK(ret == 0, "load by name: %d %s", ret, err);
    CHECK(!strcmp(ps.name, "zeta-web") && strstr(ps.path, "/one/zeta-web.pipe") && ps.sink == VKCU_SINK_ENCODE &&
          !strcmp(ps.chain, "scale=w=-2:h=36") && ps.crf == 30 && ps.faststart == 1 &&
          !strcmp(vkcu_preset_extension(&ps), ".mp4"), "zeta-web: %s %s sink %d chain '%s' crf %d ext %s", ps.name,
          ps.path, (int)ps.sink, ps.chain, ps.crf, vkcu_preset_extension(&ps));
    vkcu_job job;
    vkcu_default_job(&job);
    vkcu_preset_apply(&ps, &job);
    CHECK(job.chain == ps.chain && job.crf == 30 && job.encoder && !strcmp(job.encoder, "libx264") && job.preset &&
          !strcmp(job.preset, "fast") && job.encoder_opts && !strcmp(job.encoder_opts, "profile=high") &&
          job.faststart == 1 && job.sink == VKCU_SINK_ENCODE && job.input == NULL,
          "applied: chain '%s' crf %d encoder %s preset %s", job.chain ? job.chain : "NULL", job.crf,
          job.encoder ? job.encoder : "NULL", job.preset ? job.preset : "NULL");
    CHECK(job.pipeline_file == ps.path, "applied: pipeline_file %s", job.pipeline_file ? job.pipeline_file : "NULL");
    {
        /* The preset's file is read by the job: not an output, even with overwrite. */
        vkcu_settings s;
        vkcu_default_settings(&s);
        s.backend = VKCU_BACKEND_CPU;
        s.log_level = VKCU_LOG_QUIET;
        vkcu_context *ctx = NULL;
        CHECK(vkcu_open(&ctx, &s) == 0, "vkcu_open");
        vkcu_job hj;
        vkcu_default_job(&hj);
        vkcu_preset_apply(&ps, &hj);
        hj.input = "media/conformance/64x64-I-P-B-P-high.h264";
        hj.sink = VKCU_SINK_HASH;
        hj.hash_path = ps.path;
        hj.overwrite = 1;
        hj.chain = NULL;
        vkcu_job_result r;
        ret = vkcu_run(ctx, &hj, &r);
        CHECK(ret == VKCU_ERR_OUTPUT && strstr(r.error, "an input of this job"), "hash_path = the preset, overwrite: "
              "%d '%s'", ret, r.error);
        vkcu_preset again;
        CHECK(vkcu_preset_load(ps.path, &again, err, sizeof(err)) == 0 && !strcmp(again.chain, ps.chain),
              "the preset changed: %s", err);
        vkcu_close(&ctx);
    }

    char path[700];
    snprintf(path, sizeof(path), "%s/alpha-hash.pipe", one);
    ret = vkcu_preset_load(path, &ps, err, sizeof(err));
    CHECK(ret == 0 && ps.sink == VKCU_SINK_HASH && ps.hash_algo == VKCU_HASH_XXH64 &&
          ps.hash_format == VKCU_HASH_FORMAT_JSON && !strcmp(vkcu_preset_extension(&ps), ".jsonl"),
          "load by path: %d sink %d algo %d format %d ext %s (%s)", ret, (int)ps.sink, (int)ps.hash_algo,
          (int)ps.hash_format, vkcu_preset_extension(&ps), err);
    CHECK(!strcmp(vkcu_hash_format_name(ps.hash_format), "json"), "format name %s",
          vkcu_hash_format_name(ps.hash_format));

    ret = vkcu_preset_load("broken", &ps, err, sizeof(err));
    CHECK(ret == VKCU_ERR_USAGE && strstr(err, "broken.pipe:2:") && strstr(err, "nosuchop"), "broken: %d '%s'", ret,
          err);
    ret = vkcu_preset_load("no-such-preset", &ps, err, sizeof(err));
    CHECK(ret == VKCU_ERR_USAGE && strstr(err, "no-such-preset"), "unknown name: %d '%s'", ret, err);

    /* A preset's GPU encoder goes into the job beside its encoder; on the CPU
     * backend the encoder runs, and the result names it with its bytes. */
    char three[600];
    snprintf(three, sizeof(three), "%s/three", dir);
    mkdir(three, 0777);
    CHECK(write_text(three, "arch.pipe", "description Archive\n\nencoder ffv1\ngpu-encoder ffv1_vulkan\ngop 1\n"
                                         "encoder-opt slicecrc=1\ncontainer mkv\n") == 0, "cannot write arch.pipe");
    snprintf(path, sizeof(path), "%s/arch.pipe", three);
    ret = vkcu_preset_load(path, &ps, err, sizeof(err));
    CHECK(ret == 0 && !strcmp(ps.gpu_encoder, "ffv1_vulkan") && !strcmp(ps.encoder, "ffv1"), "arch.pipe: %d '%s' '%s' %s",
          ret, ps.gpu_encoder, ps.encoder, err);
    {
        vkcu_job gj;
        vkcu_default_job(&gj);
        CHECK(gj.gpu_encoder == NULL, "default job with a GPU encoder");
        vkcu_preset_apply(&ps, &gj);
        CHECK(gj.gpu_encoder && !strcmp(gj.gpu_encoder, "ffv1_vulkan") && gj.encoder && !strcmp(gj.encoder, "ffv1"),
              "applied: gpu_encoder %s encoder %s", gj.gpu_encoder ? gj.gpu_encoder : "NULL",
              gj.encoder ? gj.encoder : "NULL");
        vkcu_settings s;
        vkcu_default_settings(&s);
        s.backend = VKCU_BACKEND_CPU;
        s.log_level = VKCU_LOG_QUIET;
        vkcu_context *ctx = NULL;
        CHECK(vkcu_open(&ctx, &s) == 0, "vkcu_open");
        char out[700];
        snprintf(out, sizeof(out), "%s/arch.mkv", three);
        gj.input = "media/conformance/64x64-I-P-B-P-high.h264";
        gj.output = out;
        gj.overwrite = 1;
        vkcu_job_result r;
        ret = vkcu_run(ctx, &gj, &r);
        struct stat st;
        CHECK(ret == 0 && !strcmp(r.encoder, "ffv1") && r.encoded_bytes > 0 && stat(out, &st) == 0 &&
                  r.encoded_bytes < st.st_size && r.dtoh_bytes == 0 && r.gpu_encode_frames == 0 && r.cpu_seconds >= 0,
              "CPU run with a GPU encoder preset: %d encoder '%s', %lld bytes of video, dtoh %lld, '%s'", ret, r.encoder,
              (long long)r.encoded_bytes, (long long)r.dtoh_bytes, r.error);
        vkcu_close(&ctx);
    }

    snprintf(env, sizeof(env), "%s/none", dir);
    setenv("VKCU_PIPELINES", env, 1);
    memset(&l, 0, sizeof(l));
    ret = vkcu_presets_list(on_preset, &l, err, sizeof(err));
    CHECK(ret >= 0 || (ret == VKCU_ERR_INPUT && strstr(err, "VKCU_PIPELINES")), "no folder: %d '%s'", ret, err);
    CHECK(find(&l, "zeta-web") < 0, "a folder no longer named still listed");
    unsetenv("VKCU_PIPELINES");
}

typedef struct lines {
    int n, has_vulkan, has_cuda, has_pairs, newline;
} lines;

static void on_line(void *opaque, const char *line)
{
    lines *l = opaque;
    if (l->n == 0)
        l->has_vulkan = !strcmp(line, "Vulkan:");
    l->has_cuda |= !strcmp(line, "CUDA:");
    l->has_pairs |= !strncmp(line, "Pairs", 5);
    l->newline |= strchr(line, '\n') != NULL;
    l->n++;
}

static void test_probe(void)
{
    lines l;
    memset(&l, 0, sizeof(l));
    int ret = vkcu_probe(on_line, &l);
    CHECK(l.has_vulkan && l.has_cuda && l.has_pairs && !l.newline && l.n >= 5,
          "report: %d lines, Vulkan %d, CUDA %d, pairs %d, newline %d", l.n, l.has_vulkan, l.has_cuda, l.has_pairs,
          l.newline);
    vkcu_probe_info info;
    memset(&info, 0x5a, sizeof(info));
    vkcu_probe_summary(&info);
    CHECK((ret == 0) == (info.nb_pairs > 0) && (ret == 0 || ret == VKCU_ERR_DEVICE),
          "probe returned %d with %d pairs", ret, info.nb_pairs);
    CHECK(vkcu_cuda_device_count() == info.nb_cuda, "CUDA devices: %d, summary %d", vkcu_cuda_device_count(),
          info.nb_cuda);
    CHECK(info.nb_pairs > 0 || vkcu_probe_gpu_decodes(&info, 27 /* AV_CODEC_ID_H264 */) == 0,
          "GPU decode without a GPU pair");
    char vmaf[256];
    vkcu_vmaf_describe(vmaf, sizeof(vmaf));
    CHECK(vmaf[0] != 0, "empty VMAF description");
}

int main(void)
{
    char dir[] = "/tmp/vkcu-test-api-presets-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_presets(dir);
    test_probe();
    tu_remove_tree(dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("preset and probe API: listing, loading, applying, the probe report and summary\n");
    return tu_failures ? 1 : 0;
}
