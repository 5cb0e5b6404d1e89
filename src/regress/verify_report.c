/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report files of `vkcu verify`: JUnit XML (--junit), the Markdown
 * summary (--summary) and the HTML page (--html), each written whole under
 * the output file rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "manifest_priv.h"
#include "util/log.h"
#include "report.h"

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}

int vkcu_verify_write_junit(const char *path, int overwrite, const char *const *inputs, vkcu_manifest **ms, int nb,
                            const case_result *res, int nb_res, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    int total = 0, failures = 0, skipped = 0;
    double secs = 0;
    for (int i = 0; i < nb_res; i++) {
        total++;
        failures += res[i].status == CASE_FAIL;
        skipped += res[i].status == CASE_SKIP;
        secs += res[i].seconds;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"vkcu verify\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            total, failures, skipped, secs);
    for (int k = 0; k < nb; k++) {
        int t = 0, fl = 0, sk = 0;
        double s = 0;
        for (int i = 0; i < nb_res; i++)
            if (res[i].m == ms[k]) {
                t++;
                fl += res[i].status == CASE_FAIL;
                sk += res[i].status == CASE_SKIP;
                s += res[i].seconds;
            }
        fputs("  <testsuite name=\"", f);
        xml_escaped(f, ms[k]->path);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", t, fl, sk, s);
        for (int i = 0; i < nb_res; i++) {
            const case_result *r = &res[i];
            if (r->m != ms[k])
                continue;
            fputs("    <testcase classname=\"", f);
            xml_escaped(f, ms[k]->path);
            fputs("\" name=\"", f);
            xml_escaped(f, r->c->name);
            fprintf(f, "\" time=\"%.3f\"", r->seconds);
            if (r->status == CASE_FAIL || r->status == CASE_SKIP) {
                fprintf(f, ">\n      <%s message=\"", r->status == CASE_FAIL ? "failure" : "skipped");
                xml_escaped(f, r->message);
                fputs("\"", f);
                if (r->status == CASE_FAIL) {
                    fputs(">", f);
                    xml_escaped(f, r->message);
                    fputs("</failure>\n", f);
                } else {
                    fputs("/>\n", f);
                }
                fputs("    </testcase>\n", f);
            } else {
                fputs(">\n      <system-out>", f);
                xml_escaped(f, r->message);
                fputs("</system-out>\n    </testcase>\n", f);
            }
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    fclose(f);
    int ret = text ? vkcu_verify_write_text(path, text, len, overwrite, inputs, err, errlen) : AVERROR(ENOMEM);
    free(text);
    return ret;
}

static void md_cell(FILE *f, const char *s)
{
    /* a table cell: one line, no column breaks */
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
}

int vkcu_verify_write_summary(const char *path, int overwrite, const char *const *inputs, const case_result *res,
                              int nb_res, int passed, int failed, int skipped, int updated, int not_run, char *err,
                              size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    double secs = 0;
    for (int i = 0; i < nb_res; i++)
        secs += res[i].seconds;
    fprintf(f, "## vkcu verify: %s\n\n", failed ? "FAILED" : "passed");
    fprintf(f, "%d passed, %d failed", passed, failed);
    if (updated)
        fprintf(f, ", %d updated", updated);
    if (skipped)
        fprintf(f, ", %d skipped", skipped);
    if (not_run)
        fprintf(f, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
    fprintf(f, " (%.1f s of case time)\n\n", secs);
    static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" };
    if (failed) {
        fputs("### Failures\n\n", f);
        for (int i = 0; i < nb_res; i++)
            if (res[i].status == CASE_FAIL) {
                fputs("- **", f);
                md_cell(f, res[i].c->name);
                fputs("** (", f);
                md_cell(f, res[i].m->path);
                fputs("): ", f);
                md_cell(f, res[i].message);
                fputc('\n', f);
            }
        fputc('\n', f);
    }
    fputs("| case | manifest | result | seconds | detail |\n|---|---|---|---:|---|\n", f);
    for (int i = 0; i < nb_res; i++) {
        fputs("| ", f);
        md_cell(f, res[i].c->name);
        fputs(" | ", f);
        md_cell(f, res[i].m->path);
        fprintf(f, " | %s | %.2f | ", tags[res[i].status], res[i].seconds);
        md_cell(f, res[i].message);
        fputs(" |\n", f);
    }
    fclose(f);
    if (!text)
        return AVERROR(ENOMEM);
    int ret = vkcu_verify_write_text(path, text, len, overwrite, inputs, err, errlen);
    free(text);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* verify --html: the cases in a table, each failing case linked to its
 * section below (a metric case's charts and worst frames, a hash case's
 * frames in time order). One page, written whole. */
int vkcu_verify_write_html(const char *path, int overwrite, const char *const *inputs, const case_result *res,
                           int nb_res, int passed, int failed, int skipped, int updated, int not_run, char *err,
                           size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" }, *classes[] = { "pass", "fail", "skip", "pass" };
    char title[160];
    int n = snprintf(title, sizeof(title), "%d passed, %d failed", passed, failed);
    if (updated)
        n += snprintf(title + n, sizeof(title) - n, ", %d updated", updated);
    if (skipped)
        n += snprintf(title + n, sizeof(title) - n, ", %d skipped", skipped);
    if (not_run)
        snprintf(title + n, sizeof(title) - n, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
    double secs = 0;
    for (int i = 0; i < nb_res; i++)
        secs += res[i].seconds;
    vkcu_html_begin(f, "vkcu verify: ", title);
    fprintf(f, "<h1>vkcu verify</h1>\n<p class=\"%s\" id=\"totals\">%s</p>\n<p>%.1f s of case time</p>\n",
            failed ? "fail" : "pass", title, secs);
    fputs("<table class=\"cases\">\n<tr><th>case</th><th>manifest</th><th>result</th><th>seconds</th><th>detail</th>"
          "</tr>\n", f);
    for (int i = 0; i < nb_res; i++) {
        const case_result *r = &res[i];
        fputs("<tr><td>", f);
        if (r->status == CASE_FAIL)
            fprintf(f, "<a href=\"#case-%d\">", i + 1);
        vkcu_html_text(f, r->c->name, 1);
        fputs(r->status == CASE_FAIL ? "</a></td><td><span class=\"name\">" : "</td><td><span class=\"name\">", f);
        vkcu_html_text(f, r->m->path, 1);
        fprintf(f, "</span></td><td class=\"%s\">%s</td><td>%.2f</td><td>", classes[r->status], tags[r->status],
                r->seconds);
        vkcu_html_text(f, r->message, 1);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    int ret = 0;
    for (int i = 0; i < nb_res && ret >= 0; i++) {
        const case_result *r = &res[i];
        if (r->status != CASE_FAIL)
            continue;
        char id[32];
        snprintf(id, sizeof(id), "case-%d", i + 1);
        fprintf(f, "<section class=\"case\" id=\"%s\">\n<h2><span class=\"fail\">FAIL</span> ", id);
        vkcu_html_text(f, r->c->name, 1);
        fputs("</h2>\n<p>", f);
        vkcu_html_text(f, r->message, 1);
        fputs("</p>\n", f);
        if (r->plot)
            ret = vkcu_html_plot(f, r->plot, id);
        else if (r->marks)
            vkcu_html_frame_strip(f, r->marks, r->nb_marks, id);
        else
            fputs("<p>No frames to show: the case stopped before its frames were compared.</p>\n", f);
        fputs("</section>\n", f);
    }
    vkcu_html_end(f);
    fclose(f);
    if (ret >= 0 && !text)
        ret = AVERROR(ENOMEM);
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot make the page (PNG encoding failed)", path);
        ret = VKCU_ERR_OUTPUT;
    } else {
        ret = vkcu_verify_write_text(path, text, len, overwrite, inputs, err, errlen);
    }
    free(text);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}
