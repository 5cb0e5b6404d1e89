/*
 * The regression verbs: `vkcu compare A B` and `vkcu verify MANIFEST`.
 * Arguments only; the work is in compare.c and manifest.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "regress/compare.h"
#include "util/log.h"
#include "regress/manifest.h"
#include "util/number.h"

/* Job options compare cannot honour (it writes no video). */
static int reject_unsupported(const char *verb, const vkcu_job_params *p)
{
    if (p->stats)
        return cli_usage_error("%s: --stats is not supported", verb);
    return 0;
}

static void compare_help(void)
{
    printf("Usage: vkcu compare A B [options]\n\n"
           "Decodes A and B (media files, or hash lists written by 'vkcu hash'), pairs\n"
           "their frames by timestamp and reports, per frame, PSNR (per plane), SSIM and\n"
           "the largest absolute sample difference, the first differing frame, and frames\n"
           "or timestamps that do not match. PSNR and SSIM are FFmpeg's psnr and ssim\n"
           "filters' definitions. Without --max-diff or --min-psnr, any difference fails.\n\n"
           "  --max-diff N             pass when no sample differs by more than N code values\n"
           "  --min-psnr DB            pass when every frame's PSNR (all planes) is at least DB\n"
           "  --diff-image FILE.png    draw the worst frame's difference, amplified, with a scale\n"
           "  --per-frame              one line per frame (default: differing frames only)\n"
           "  --align start|pts|index  how frames pair: start (default) takes each input's first\n"
           "                           frame as time zero; pts pairs equal timestamps as 'vkcu hash'\n"
           "                           prints them; index pairs frame n with frame n\n"
           "  --chain-a TEXT, --chain-b TEXT  operators for one input only (after --chain)\n"
           "  --scale                  compare different sizes: B scaled to A's size and format\n"
           "                           (swscale bicubic, as ffmpeg's scale=W:H:flags=bicubic+accurate_rnd+bitexact)\n"
           "  --csv FILE, --json FILE  one row per paired frame (pts, PSNR, SSIM, max diff, VMAF)\n"
           "  --vmaf                   score every pair with libvmaf's default model (vmaf_v0.6.1),\n"
           "                           A the reference; per-frame lines then print at the end\n"
           "  --min-vmaf SCORE         pass when the mean VMAF is at least SCORE (implies --vmaf)\n"
           "  --report FILE.html       one self-contained page: per-frame charts, the summary and the\n"
           "                           worst frames as A/B/difference thumbnails (no script, no network)\n"
           "  -y                       replace an existing --diff-image, --csv, --json or --report file\n"
           "                           (never A or B)\n"
           "  --chain, --backend, --start, --duration, --frames and the other processing options\n"
           "  apply to both inputs; --start and --duration count from each input's own start\n\n");
    cli_job_options_help(stdout);
    printf("\nExit codes: 0 the inputs match (within the limits), 6 they do not,\n"
           "  3 an input is missing or unreadable, 2 bad usage (or --vmaf in a build without libvmaf),\n"
           "  4 an output file cannot be written (or exists, without -y).\n");
}

int cli_main_compare(int argc, char **argv)
{
    vkcu_job_params job;
    vkcu_job_params_default(&job);
    job.progress = 0;
    job.sink = VKCU_SINK_HASH; /* frames are compared, not encoded: hash presets are fine here */
    vkcu_compare_params cp;
    vkcu_compare_params_default(&cp);
    const char *inputs[2] = { NULL, NULL };
    const char *chain_a = NULL, *chain_b = NULL;
    int nb_inputs = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int operand = cli_operand(a, &opts_done);
        if (operand < 0)
            continue;
        int n = operand ? 0 : cli_job_option(&job, argc, argv, i);
        if (n < 0)
            return VKCU_EXIT_USAGE;
        if (n > 0) {
            i += n - 1;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (operand) {
            if (nb_inputs == 2)
                return cli_usage_error("compare: more than two inputs ('%s')", a);
            inputs[nb_inputs++] = a;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            compare_help();
            return 0;
        } else if (!strcmp(a, "--max-diff") || !strcmp(a, "--min-psnr") || !strcmp(a, "--diff-image") ||
                   !strcmp(a, "--min-vmaf")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--diff-image")) {
                cp.diff_image = v;
            } else if (!strcmp(a, "--max-diff")) {
                long x;
                if (cli_parse_int(a, v, 0, 65535, &x) < 0)
                    return VKCU_EXIT_USAGE;
                cp.max_diff = (int)x;
            } else if (!strcmp(a, "--min-vmaf")) {
                if (cli_parse_number(a, v, 0, 100, &cp.min_vmaf) < 0)
                    return VKCU_EXIT_USAGE;
            } else if (cli_parse_number(a, v, 0, 1000, &cp.min_psnr) < 0) {
                return VKCU_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--align") || !strcmp(a, "--chain-a") || !strcmp(a, "--chain-b") ||
                   !strcmp(a, "--csv") || !strcmp(a, "--json") || !strcmp(a, "--report")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--chain-a"))
                chain_a = v;
            else if (!strcmp(a, "--chain-b"))
                chain_b = v;
            else if (!strcmp(a, "--csv"))
                cp.csv = v;
            else if (!strcmp(a, "--json"))
                cp.json = v;
            else if (!strcmp(a, "--report"))
                cp.report_html = v;
            else if (!strcmp(v, "start"))
                cp.align = VKCU_ALIGN_START;
            else if (!strcmp(v, "pts"))
                cp.align = VKCU_ALIGN_PTS;
            else if (!strcmp(v, "index"))
                cp.align = VKCU_ALIGN_INDEX;
            else
                return cli_usage_error("--align: '%s' is not start, pts or index", v);
        } else if (!strcmp(a, "--per-frame")) {
            cp.per_frame = 1;
        } else if (!strcmp(a, "--scale")) {
            cp.scale = 1;
        } else if (!strcmp(a, "--vmaf")) {
            cp.vmaf = 1;
        } else if (!strcmp(a, "-y")) {
            cp.overwrite = 1;
        } else {
            return cli_usage_error("compare: unknown option '%s' (a file whose name starts with '-' goes after '--')", a);
        }
    }
    if (nb_inputs < 2)
        return cli_usage_error("compare: needs two inputs, A and B");
    if (reject_unsupported("compare", &job))
        return VKCU_EXIT_USAGE;
    /* One side's chain runs after the shared --chain. */
    vkcu_job_params job_a = job, job_b = job;
    char *chains[2] = { NULL, NULL };
    const char *extra[2] = { chain_a, chain_b };
    vkcu_job_params *sides[2] = { &job_a, &job_b };
    for (int k = 0; k < 2; k++) {
        if (!extra[k] || !*extra[k])
            continue;
        if (job.chain && *job.chain) {
            size_t n = strlen(job.chain) + strlen(extra[k]) + 2;
            chains[k] = malloc(n);
            if (!chains[k])
                return VKCU_EXIT_FAIL;
            snprintf(chains[k], n, "%s,%s", job.chain, extra[k]);
            sides[k]->chain = chains[k];
        } else {
            sides[k]->chain = extra[k];
        }
    }
    cp.a = inputs[0];
    cp.b = inputs[1];
    cp.job = &job_a;
    cp.job_b = &job_b;
    cp.report = stdout;
    cli_install_signals();
    vkcu_compare_result r;
    int ret = vkcu_compare_run(&cp, &r);
    free(chains[0]);
    free(chains[1]);
    fflush(stdout);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH) {
        fprintf(stderr, "vkcu: error: %s\n", r.error[0] ? r.error : "compare failed");
        return vkcu_exit_code(ret);
    }
    if (ret == VKCU_ERR_MISMATCH)
        fprintf(stderr, "vkcu: %s vs %s: %s\n", cp.a, cp.b, r.verdict);
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}

static void verify_help(void)
{
    printf("Usage: vkcu verify MANIFEST... [options]\n\n"
           "Runs every case of a regression manifest (docs/regression.md): decodes the\n"
           "input, applies its chain or pipeline, and checks the expectation: exact\n"
           "per-frame hashes, or metric limits against a reference. Prints one line per\n"
           "case and 'N passed, N failed'.\n\n"
           "  --backend cpu|gpu|auto   run every case on this backend (overrides the manifest)\n"
           "  --junit FILE             also write the results as JUnit XML\n"
           "  -y                       replace an existing --junit, --summary or --html FILE\n"
           "  --summary FILE.md        also write a Markdown summary (CI job pages); -y replaces it\n"
           "  --html FILE.html         also write one self-contained page: every case, and each failing\n"
           "                           case's charts (metric cases) or frames (hash cases); -y replaces it\n"
           "  -j N                     run N cases at once; results still print in manifest order\n"
           "  --timeout SECONDS        fail a case that runs longer (a case's 'timeout' key wins)\n"
           "  --fail-fast              stop at the first failing case\n"
           "  --update                 rewrite the expected hashes from this run; prints what changed\n"
           "  --case NAME              run only the cases with this name (repeatable; '*' globs)\n"
           "  --allow-outside          let a case's hashes file lie outside its manifest's folder\n"
           "                           (refused by default: --update writes there)\n"
           "  --device N, --ring-size K, --handoff binary|timeline, -q, --log-level LEVEL\n\n"
           "Exit codes: 0 every case passed (or was updated), 6 a case failed,\n"
           "  3 a manifest is missing or malformed, 2 bad usage (or min-vmaf in a build without libvmaf),\n"
           "  4 an output cannot be written.\n");
}

int cli_main_verify(int argc, char **argv)
{
    vkcu_job_params base;
    vkcu_job_params_default(&base);
    base.progress = 0;
    vkcu_verify_params vp;
    vkcu_verify_params_default(&vp);
    const char *manifests[64];
    const char *cases[64];
    int nb_manifests = 0, nb_cases = 0, backend_given = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int operand = cli_operand(a, &opts_done);
        if (operand < 0)
            continue;
        if (operand) {
            if (nb_manifests == 64)
                return cli_usage_error("verify: more than 64 manifests");
            manifests[nb_manifests++] = a;
            continue;
        }
        if (!strcmp(a, "--chain") || !strcmp(a, "--start") || !strcmp(a, "--duration") || !strcmp(a, "--frames") ||
            !strcmp(a, "--strict") || !strcmp(a, "--stats"))
            return cli_usage_error("verify: %s belongs in a manifest case, not on the command line", a);
        if (!strcmp(a, "--backend"))
            backend_given = 1;
        int n = cli_job_option(&base, argc, argv, i);
        if (n < 0)
            return VKCU_EXIT_USAGE;
        if (n > 0) {
            if (!strcmp(a, "--pipeline"))
                return cli_usage_error("verify: --pipeline belongs in a manifest case, not on the command line");
            i += n - 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            verify_help();
            return 0;
        } else if (!strcmp(a, "--junit") || !strcmp(a, "--case")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--junit"))
                vp.junit = v;
            else if (nb_cases < 64)
                cases[nb_cases++] = v;
            else
                return cli_usage_error("verify: more than 64 --case options");
        } else if (!strcmp(a, "--summary") || !strcmp(a, "--html") || !strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--timeout")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--summary")) {
                vp.summary = v;
            } else if (!strcmp(a, "--html")) {
                vp.html = v;
            } else if (!strcmp(a, "--timeout")) {
                if (vkcu_parse_number(v, 0.001, 1e6, &vp.timeout) < 0)
                    return cli_usage_error("--timeout: '%s' is not a number of seconds in [0.001, 1000000]", v);
            } else {
                int64_t x;
                if (vkcu_parse_int(v, 1, 64, &x) < 0)
                    return cli_usage_error("%s: '%s' is not an integer in [1, 64]", a, v);
                vp.jobs = (int)x;
            }
        } else if (!strcmp(a, "--fail-fast")) {
            vp.fail_fast = 1;
        } else if (!strcmp(a, "--update")) {
            vp.update = 1;
        } else if (!strcmp(a, "--allow-outside")) {
            vp.allow_outside = 1;
        } else if (!strcmp(a, "-y")) {
            vp.overwrite = 1;
        } else {
            return cli_usage_error("verify: unknown option '%s' (a file whose name starts with '-' goes after '--')", a);
        }
    }
    if (!nb_manifests)
        return cli_usage_error("verify: no manifest given");
    vp.base = &base;
    vp.backend_override = backend_given ? (int)base.backend : -1;
    vp.cases = cases;
    vp.nb_cases = nb_cases;
    vp.out = stdout;
    cli_install_signals();
    char err[1024] = "";
    int ret = vkcu_verify_run(manifests, nb_manifests, &vp, err, sizeof(err));
    fflush(stdout);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH) {
        fprintf(stderr, "vkcu: error: %s\n", err[0] ? err : "verify failed");
        return vkcu_exit_code(ret);
    }
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}
