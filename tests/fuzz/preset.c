/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the preset parser (src/batch/preset.c, `*.pipe` files). The input
 * is the file's bytes. A preset either fails with "PATH:LINE:COLUMN: ..."
 * on one line, or loads into a chain that parses again and settings the
 * job can use.
 */
#include "fuzz.h"
#include "ops/op.h"
#include "batch/preset.h"

#define PATH "fuzz/input.pipe"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    vkcu_preset ps;
    char err[1024] = "";
    int ret = vkcu_preset_parse((const char *)data, size, PATH, &ps, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_USAGE, "parse returned %d", ret);
        fuzz_check_message(err, PATH ":");
        int line, col;
        FUZZ_CHECK(sscanf(err, PATH ":%d:%d: ", &line, &col) == 2 && line >= 1 && col >= 1,
                   "no line and column: %s", err);
        return 0;
    }
    FUZZ_CHECK(!strcmp(ps.name, "input"), "name '%s'", ps.name);
    vkcu_chain chain;
    char cerr[512] = "";
    FUZZ_CHECK(vkcu_chain_parse(ps.chain, &chain, cerr, sizeof(cerr)) == 0, "chain '%s' of a valid preset: %s",
               ps.chain, cerr);
    vkcu_chain_free(&chain);
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    vkcu_preset_apply_params(&ps, &p);
    const char *ext = vkcu_preset_extension(&ps);
    FUZZ_CHECK(ext && ext[0] == '.', "extension '%s'", ext ? ext : "(null)");
    return 0;
}
