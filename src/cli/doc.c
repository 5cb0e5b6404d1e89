/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Everything written about the options comes from the option table
 * (opts.c): each verb's --help, the hidden --dump-options listing the
 * tests compare with --help and the parser, the man pages (roff) and the
 * bash completion script. Prose lives in the table's verb entries; this
 * file only lays it out.
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"
#include <vkcu/chain.h>
#include <vkcu/formats.h>
#include <vkcu/version.h>

#define HELP_WIDTH 79
#define HELP_COLUMN 27 /* where option help starts */

static const char *const group_titles[CLI_NB_GROUPS] = {
    [CLI_G_VERB] = "Options",
    [CLI_G_OUTPUT] = "Output options",
    [CLI_G_ENCODE] = "Encoder options",
    [CLI_G_PROCESS] = "Processing options",
};

static int visible(const cli_option *o, enum cli_verb_id verb)
{
    return (o->verbs & CLI_V(verb)) && !(o->flags & CLI_HIDDEN);
}

/* "-j, --jobs N" */
static void option_spec(const cli_option *o, char *buf, size_t size)
{
    const char *mv = o->type == CLI_ARG_NONE ? NULL : o->metavar;
    if (o->short_name && o->name)
        snprintf(buf, size, "-%c, --%s%s%s", o->short_name, o->name, mv ? " " : "", mv ? mv : "");
    else if (o->name)
        snprintf(buf, size, "--%s%s%s", o->name, mv ? " " : "", mv ? mv : "");
    else
        snprintf(buf, size, "-%c%s%s", o->short_name, mv ? " " : "", mv ? mv : "");
}

/* The help text with what the table states besides it: range, default,
 * repeatability. */
static void option_text(const cli_option *o, char *buf, size_t size)
{
    char extra[160] = "";
    if (o->type == CLI_ARG_INT || o->type == CLI_ARG_NUMBER)
        snprintf(extra, sizeof(extra), "%.15g..%.15g%s%s", o->lo, o->hi, o->def ? ", default " : "",
                 o->def ? o->def : "");
    else if (o->def)
        snprintf(extra, sizeof(extra), "default %s", o->def);
    if (o->flags & CLI_REPEAT)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%srepeatable", extra[0] ? "; " : "");
    size_t n = strlen(o->help);
    if (extra[0] && n && o->help[n - 1] == ')') /* "text (note; 0..63)", not "text (note) (0..63)" */
        snprintf(buf, size, "%.*s; %s)", (int)(n - 1), o->help, extra);
    else if (extra[0])
        snprintf(buf, size, "%s (%s)", o->help, extra);
    else
        snprintf(buf, size, "%s", o->help);
}

/* Writes `text` wrapped at HELP_WIDTH, every line indented by `indent`,
 * the first one continuing at column `col`. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t room = (size_t)(HELP_WIDTH - col), len = strlen(p);
        size_t cut = len;
        if (len > room) {
            cut = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0) /* one word longer than the line */
                cut = strcspn(p, " ");
        }
        fprintf(out, "%.*s\n", (int)cut, p);
        p += cut;
        if (*p) {
            while (*p == ' ')
                p++;
            if (*p)
                fprintf(out, "%*s", indent, "");
            col = indent;
        }
    }
}

/* Prose: paragraphs split at "\n\n"; a line starting with two spaces (a
 * table) is printed as it is, other lines are wrapped. */
static void prose(FILE *out, const char *text)
{
    char para[4096];
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        if (len >= sizeof(para))
            len = sizeof(para) - 1;
        memcpy(para, p, len);
        para[len] = 0;
        if (!strncmp(para, "  ", 2) || !para[0])
            fprintf(out, "%s\n", para);
        else
            wrap(out, para, 0, 0);
        p += len;
        if (*p == '\n')
            p++;
    }
}

void cli_print_help(enum cli_verb_id verb, FILE *out)
{
    const cli_verb_doc *d = &cli_verb_docs[verb];
    if (verb == CLI_TRANSCODE)
        fprintf(out, "vkcu %s: %s\n\n", vkcu_version(), d->summary);
    const char *u = d->usage;
    for (int first = 1; *u; first = 0) {
        size_t len = strcspn(u, "\n");
        fprintf(out, "%s%.*s\n", first ? "Usage: " : "       ", (int)len, u);
        u += len + (u[len] == '\n');
    }
    fputc('\n', out);
    prose(out, d->description);
    if (verb == CLI_TRANSCODE) {
        fputc('\n', out);
        prose(out, d->notes);
        fputs("\nVerbs:\n", out);
        for (int v = 1; v < CLI_NB_VERBS; v++)
            fprintf(out, "  %-10s %s\n", cli_verb_docs[v].name, cli_verb_docs[v].summary);
    }
    for (int g = 0; g < CLI_NB_GROUPS; g++) {
        int shown = 0;
        for (int i = 0; i < cli_nb_options; i++) {
            const cli_option *o = &cli_options[i];
            if (!visible(o, verb) || o->group != (enum cli_group)g)
                continue;
            if (!shown++)
                fprintf(out, "\n%s:\n", group_titles[g]);
            char spec[128], text[1024];
            option_spec(o, spec, sizeof(spec));
            option_text(o, text, sizeof(text));
            if (strlen(spec) + 2 < HELP_COLUMN - 1) {
                fprintf(out, "  %-*s", HELP_COLUMN - 2, spec);
            } else {
                fprintf(out, "  %s\n%*s", spec, HELP_COLUMN, "");
            }
            wrap(out, text, HELP_COLUMN, HELP_COLUMN);
        }
    }
    fprintf(out, "  %-*s", HELP_COLUMN - 2, "--");
    wrap(out, "end of options: what follows are files, even '-y' or '--help'", HELP_COLUMN, HELP_COLUMN);
    if (verb != CLI_TRANSCODE && d->notes) {
        fputc('\n', out);
        prose(out, d->notes);
    }
    fprintf(out, "\nExit codes:\n%s\n", d->exit_codes);
}

static const char *const type_names[] = {
    [CLI_ARG_NONE] = "flag",  [CLI_ARG_INT] = "int",      [CLI_ARG_NUMBER] = "number", [CLI_ARG_BITRATE] = "bitrate",
    [CLI_ARG_TIME] = "time",  [CLI_ARG_CHOICE] = "choice", [CLI_ARG_TEXT] = "text",   [CLI_ARG_FILE] = "file",
    [CLI_ARG_PRESET] = "preset", [CLI_ARG_PICK] = "pick",
};

void cli_print_options(enum cli_verb_id verb, FILE *out)
{
    for (int i = 0; i < cli_nb_options; i++) {
        const cli_option *o = &cli_options[i];
        if (!visible(o, verb))
            continue;
        char sh[4] = "-";
        if (o->short_name)
            snprintf(sh, sizeof(sh), "-%c", o->short_name);
        fprintf(out, "%s%s\t%s\t%s\t%s\t", o->name ? "--" : "", o->name ? o->name : "-", sh, type_names[o->type],
                o->metavar && o->type != CLI_ARG_NONE ? o->metavar : "-");
        if (o->type == CLI_ARG_INT || o->type == CLI_ARG_NUMBER || o->type == CLI_ARG_PICK)
            fprintf(out, "%.15g\t%.15g", o->lo, o->hi);
        else
            fputs("-\t-", out);
        fprintf(out, "\t%s\t%s\n", o->choices ? o->choices : "-", o->def ? o->def : "-");
    }
}

/* ---- man pages ---- */

/* Text for roff: backslashes and hyphens escaped, nothing that a line
 * start could take for a request. */
static void roff_text(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        if (s[i] == '\\')
            fputs("\\e", out);
        else if (s[i] == '-')
            fputs("\\-", out);
        else if (s[i] == '\n') {
            fputc('\n', out);
            if (i + 1 < n && (s[i + 1] == '.' || s[i + 1] == '\''))
                fputs("\\&", out);
        } else
            fputc(s[i], out);
    }
}

static void roff_line(FILE *out, const char *s)
{
    while (*s == ' ')
        s++;
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    roff_text(out, s, strlen(s));
    fputc('\n', out);
}

/* The same prose as --help: paragraphs, and runs of two-space lines kept as
 * they are (no fill). */
static void roff_prose(FILE *out, const char *text)
{
    const char *p = text;
    int in_table = 0, para_open = 0;
    while (*p) {
        size_t len = strcspn(p, "\n");
        char line[4096];
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        if (!strncmp(line, "  ", 2)) {
            if (!in_table)
                fputs(".PP\n.nf\n", out);
            in_table = 1;
            para_open = 0;
            roff_line(out, line);
        } else {
            if (in_table)
                fputs(".fi\n", out);
            in_table = 0;
            if (!line[0]) {
                para_open = 0;
            } else {
                if (!para_open)
                    fputs(".PP\n", out);
                para_open = 1;
                roff_line(out, line);
            }
        }
        p += len + (p[len] == '\n');
    }
    if (in_table)
        fputs(".fi\n", out);
}

static void roff_upper(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, out);
}

static void page_name(enum cli_verb_id verb, char *buf, size_t size)
{
    if (verb == CLI_TRANSCODE)
        snprintf(buf, size, "vkcu");
    else
        snprintf(buf, size, "vkcu-%s", cli_verb_docs[verb].name);
}

static void roff_option(FILE *out, const cli_option *o)
{
    fputs(".TP\n", out);
    if (o->short_name)
        fprintf(out, "\\fB\\-%c\\fR%s", o->short_name, o->name ? ", " : "");
    if (o->name) {
        fputs("\\fB\\-\\-", out);
        roff_text(out, o->name, strlen(o->name));
        fputs("\\fR", out);
    }
    if (o->type != CLI_ARG_NONE && o->metavar) {
        fputs(" \\fI", out);
        roff_text(out, o->metavar, strlen(o->metavar));
        fputs("\\fR", out);
    }
    fputc('\n', out);
    char text[1024];
    option_text(o, text, sizeof(text));
    size_t n = strlen(text);
    if (n && text[n - 1] != '.' && text[n - 1] != ')')
        snprintf(text + n, sizeof(text) - n, ".");
    roff_line(out, text);
}

void cli_print_man(enum cli_verb_id verb, const char *version, FILE *out)
{
    const cli_verb_doc *d = &cli_verb_docs[verb];
    char name[64];
    page_name(verb, name, sizeof(name));
    fputs(".\\\" Generated from vkcu's option table (src/opts.c) by 'vkcu --generate man'; do not edit.\n", out);
    fputs(".TH ", out);
    roff_upper(out, name);
    fprintf(out, " 1 \"\" \"vkcu %s\" \"vkcu manual\"\n.nh\n.ad l\n", version);
    fputs(".SH NAME\n", out);
    roff_text(out, name, strlen(name));
    fputs(" \\- ", out);
    roff_line(out, d->summary);
    fputs(".SH SYNOPSIS\n.nf\n", out);
    roff_line(out, d->usage);
    fputs(".fi\n.SH DESCRIPTION\n", out);
    roff_prose(out, d->description);
    if (verb == CLI_TRANSCODE) {
        fputs(".SH VERBS\n", out);
        roff_prose(out, d->notes);
        for (int v = 1; v < CLI_NB_VERBS; v++) {
            fprintf(out, ".TP\n\\fBvkcu %s\\fR\n", cli_verb_docs[v].name);
            roff_text(out, cli_verb_docs[v].summary, strlen(cli_verb_docs[v].summary));
            fprintf(out, ".\nSee \\fBvkcu\\-%s\\fR(1).\n", cli_verb_docs[v].name);
        }
    }
    fputs(".SH OPTIONS\n", out);
    int groups = 0;
    for (int g = 0; g < CLI_NB_GROUPS; g++)
        for (int i = 0; i < cli_nb_options; i++)
            if (visible(&cli_options[i], verb) && cli_options[i].group == (enum cli_group)g) {
                groups++;
                break;
            }
    for (int g = 0; g < CLI_NB_GROUPS; g++) {
        int shown = 0;
        for (int i = 0; i < cli_nb_options; i++) {
            const cli_option *o = &cli_options[i];
            if (!visible(o, verb) || o->group != (enum cli_group)g)
                continue;
            if (!shown++ && groups > 1)
                fprintf(out, ".SS \"%s\"\n", group_titles[g]);
            roff_option(out, o);
        }
    }
    fputs(".TP\n\\fB\\-\\-\\fR\nEnd of options: what follows are files, even \\(aq\\-y\\(aq or "
          "\\(aq\\-\\-help\\(aq.\n",
          out);
    fputs(".PP\nOptions may come before or after the operands, as \\fB\\-\\-name value\\fR or "
          "\\fB\\-\\-name=value\\fR; short options group (\\fB\\-yq\\fR) and take their value attached or "
          "separate (\\fB\\-j2\\fR, \\fB\\-j 2\\fR). An option given twice takes the last value, except those "
          "marked repeatable. Long options are not abbreviated: a prefix, a typo, another verb\\(aqs option or "
          "an ffmpeg option is refused (exit 2) with the option meant.\n",
          out);
    if (verb != CLI_TRANSCODE && d->notes) {
        fputs(".SH NOTES\n", out);
        roff_prose(out, d->notes);
    }
    fputs(".SH EXIT STATUS\n", out);
    roff_prose(out, d->exit_codes);
    if (d->environment) {
        fputs(".SH ENVIRONMENT\n", out);
        for (const char *p = d->environment; *p;) {
            size_t len = strcspn(p, "\n"), tab = strcspn(p, "\t");
            if (tab < len) {
                fputs(".TP\n.B ", out);
                roff_text(out, p, tab);
                fputc('\n', out);
                char line[1024];
                snprintf(line, sizeof(line), "%.*s", (int)(len - tab - 1), p + tab + 1);
                roff_line(out, line);
            }
            p += len + (p[len] == '\n');
        }
    }
    fputs(".SH SEE ALSO\n", out);
    int first = 1;
    for (int v = 0; v < CLI_NB_VERBS; v++) {
        if (v == (int)verb)
            continue;
        char other[64];
        page_name((enum cli_verb_id)v, other, sizeof(other));
        fputs(first ? "" : ",\n", out);
        fputs("\\fB", out);
        roff_text(out, other, strlen(other));
        fputs("\\fR(1)", out);
        first = 0;
    }
    fputs(",\n\\fBffmpeg\\fR(1)\n", out);
}

/* ---- bash completion ---- */

/* The choices "a, b or c" as "a b c". */
static void choice_words(const char *choices, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *p = choices; *p && n + 1 < size;) {
        if (!strncmp(p, "or ", 3))
            p += 3;
        size_t len = strcspn(p, ", ");
        if (n + len + 2 >= size)
            break;
        memcpy(buf + n, p, len);
        n += len;
        buf[n++] = ' ';
        p += len;
        p += strspn(p, ", ");
    }
    buf[n ? n - 1 : 0] = 0;
}

/* The words that complete an option's value where the library has the
 * list (the parser takes any name the library takes): video encoders for
 * --encoder, containers that hold video for -f. 0 when the option has none. */
static int value_words(const cli_option *o, FILE *out)
{
    if (o->id == OPT_ENCODER) {
        vkcu_encoder_info e;
        fputs(") words='auto", out);
        for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++)
            if (!strcmp(e.media, "video"))
                fprintf(out, " %s", e.name);
        fputs("' ;;\n", out);
        return 1;
    }
    if (o->id == OPT_AUDIO_ENCODER) {
        vkcu_encoder_info e;
        fputs(") words='auto copy", out);
        for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++)
            if (!strcmp(e.media, "audio"))
                fprintf(out, " %s", e.name);
        fputs("' ;;\n", out);
        return 1;
    }
    if (o->id == OPT_FORMAT) {
        vkcu_container_info c;
        fputs(") words='y4m mkv", out); /* the aliases the library takes */
        for (int i = 0; vkcu_container_get(i, &c) == 0; i++)
            if (c.encoder)
                fprintf(out, " %s", c.name);
        fputs("' ;;\n", out);
        return 1;
    }
    if (o->id == OPT_PRESET) {
        fputs(") what=encoder-preset ;;\n", out);
        return 1;
    }
    return 0;
}

static void completion_verb(enum cli_verb_id verb, const char *const *ops, FILE *out)
{
    fprintf(out, "    %s)\n        opts='", verb == CLI_TRANSCODE ? "vkcu" : cli_verb_docs[verb].name);
    int first = 1;
    for (int i = 0; i < cli_nb_options; i++) {
        const cli_option *o = &cli_options[i];
        if (!visible(o, verb))
            continue;
        if (o->name)
            fprintf(out, "%s--%s", first ? "" : " ", o->name), first = 0;
        if (o->short_name)
            fprintf(out, "%s-%c", first ? "" : " ", o->short_name), first = 0;
    }
    fputs("'\n        case $prev in\n", out);
    for (int i = 0; i < cli_nb_options; i++) {
        const cli_option *o = &cli_options[i];
        if (!visible(o, verb) || o->type == CLI_ARG_NONE)
            continue;
        fputs("        ", out);
        if (o->name)
            fprintf(out, "--%s%s", o->name, o->short_name ? "|" : "");
        if (o->short_name)
            fprintf(out, "-%c", o->short_name);
        char words[512];
        switch (o->type) {
        case CLI_ARG_FILE:
            fputs(") what=file ;;\n", out);
            break;
        case CLI_ARG_PRESET:
            fputs(") what=preset ;;\n", out);
            break;
        case CLI_ARG_CHOICE:
        case CLI_ARG_PICK:
            choice_words(o->choices, words, sizeof(words));
            fprintf(out, ") words='%s' ;;\n", words);
            break;
        default:
            if (o->id == OPT_CHAIN || o->id == OPT_CHAIN_A || o->id == OPT_CHAIN_B) {
                fputs(") what=chain words='", out);
                for (int k = 0; ops && ops[k]; k++)
                    fprintf(out, "%s%s", k ? " " : "", ops[k]);
                fputs("' ;;\n", out);
            } else if (!value_words(o, out)) {
                fputs(") return 0 ;;\n", out);
            }
        }
    }
    fputs("        esac ;;\n", out);
}

/* Shell functions with the library's lists: each operator's keys, and each
 * encoder's named presets. */
static void completion_lists(const char *const *ops, FILE *out)
{
    fputs("_vkcu_ops='", out);
    for (int k = 0; ops && ops[k]; k++)
        fprintf(out, "%s%s", k ? " " : "", ops[k]);
    fputs("'\n_vkcu_op_keys() {\n    # each operator's keys, in the order values without a key take them\n"
          "    case $1 in\n", out);
    for (int k = 0; ops && ops[k]; k++) {
        if (!vkcu_operator_key(ops[k], 0))
            continue;
        fprintf(out, "    %s) echo '", ops[k]);
        for (int i = 0; vkcu_operator_key(ops[k], i); i++)
            fprintf(out, "%s%s", i ? " " : "", vkcu_operator_key(ops[k], i));
        fputs("' ;;\n", out);
    }
    fputs("    esac\n}\n"
          "_vkcu_encoder_presets() {\n    # each encoder's named presets (--preset)\n    case $1 in\n", out);
    vkcu_encoder_info e;
    for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++) {
        if (strcmp(e.media, "video") || !vkcu_encoder_choice(e.name, "preset", 0))
            continue;
        fprintf(out, "    %s) echo '", e.name);
        for (int k = 0; vkcu_encoder_choice(e.name, "preset", k); k++)
            fprintf(out, "%s%s", k ? " " : "", vkcu_encoder_choice(e.name, "preset", k));
        fputs("' ;;\n", out);
    }
    fputs("    esac\n}\n", out);
}

/* The bash completion script, from the option table and the build's lists.
 * Long: most of it is the script's own text, which reads best in one piece. */
void cli_print_completion(const char *const *ops, FILE *out)
{
    fputs("# bash completion for vkcu: generated from its option table by 'vkcu --generate completion';\n"
          "# do not edit. Completes verbs, each verb's options, option values (choices,\n"
          "# files, preset names, operators and their keys, encoders, containers, encoder\n"
          "# presets) and the operands (files, or folders for batch).\n"
          "_vkcu_presets() {\n"
          "    # 'vkcu pipelines' lists the presets, then a blank line, then the operators.\n"
          "    # The command as typed: a leading ~ is not expanded in COMP_WORDS.\n"
          "    local vkcu=$1\n"
          "    [[ $vkcu == \"~/\"* ]] && vkcu=$HOME/${vkcu#\"~/\"}\n"
          "    command -v \"$vkcu\" > /dev/null 2>&1 || vkcu=vkcu\n"
          "    \"$vkcu\" pipelines 2> /dev/null | sed -n '/^$/q; s/^\\([^ ]*\\) .*/\\1/p'\n"
          "}\n",
          out);
    completion_lists(ops, out);
    fputs(
          "_vkcu() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev= verb=vkcu opts= words= what= i\n"
          "    [ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    # '--opt=value': bash splits at '=' (COMP_WORDBREAKS)\n"
          "    if [ \"$cur\" = = ]; then\n"
          "        cur=\n"
          "    elif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 1 ]; then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    elif [[ $cur == --*=* ]]; then\n"
          "        prev=${cur%%=*}\n"
          "        cur=${cur#*=}\n"
          "    fi\n"
          "    COMPREPLY=()\n"
          "    if [ \"$COMP_CWORD\" -gt 1 ]; then\n"
          "        case ${COMP_WORDS[1]} in\n",
          out);
    fputs("        ", out);
    for (int v = 1; v < CLI_NB_VERBS; v++)
        fprintf(out, "%s%s", v > 1 ? "|" : "", cli_verb_docs[v].name);
    fputs("|help) verb=${COMP_WORDS[1]} ;;\n"
          "        esac\n"
          "    fi\n"
          "    case $verb in\n",
          out);
    for (int v = 0; v < CLI_NB_VERBS; v++)
        completion_verb((enum cli_verb_id)v, ops, out);
    fputs("    esac\n"
          "    # A chain's text: bash splits it at '=' and ':' (COMP_WORDBREAKS), so it\n"
          "    # is read back from the line up to the cursor.\n"
          "    local chain=\n"
          "    if [ -n \"${COMP_LINE:-}\" ]; then\n"
          "        local upto=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}} lastw before\n"
          "        lastw=${upto##*[[:space:]]}\n"
          "        before=${upto%\"$lastw\"}\n"
          "        before=${before%\"${before##*[![:space:]]}\"}\n"
          "        case $lastw in\n"
          "        --chain=*|--chain-a=*|--chain-b=*) chain=${lastw#*=} ;;\n"
          "        *) case ${before##*[[:space:]]} in --chain|--chain-a|--chain-b) chain=$lastw ;; esac ;;\n"
          "        esac\n"
          "        [[ $chain == *[=:]* ]] && what=chain && words=$_vkcu_ops\n"
          "    fi\n"
          "    if [ \"$what\" = chain ]; then\n"
          "        [ -n \"$chain\" ] || chain=$cur\n"
          "        local seg=${chain##*,}\n"
          "        if [[ $seg == *=* ]]; then\n"
          "            # a key of the operator, after 'name=' or ':'\n"
          "            local op=${seg%%=*} part=${seg##*[=:]}\n"
          "            local head=${seg%\"$part\"}\n"
          "            [ \"$head\" = \"$op=\" ] || [[ $head == *: ]] &&\n"
          "                COMPREPLY=($(compgen -S = -W \"$(_vkcu_op_keys \"$op\")\" -- \"$part\"))\n"
          "        else\n"
          "            # an operator name at the start and after each ','\n"
          "            local pre=\n"
          "            [[ $cur == *,* ]] && pre=${cur%,*},\n"
          "            COMPREPLY=($(compgen -P \"$pre\" -W \"$words\" -- \"${cur##*,}\"))\n"
          "        fi\n"
          "        compopt -o nospace 2> /dev/null\n"
          "        return 0\n"
          "    elif [ \"$what\" = encoder-preset ]; then\n"
          "        # the presets of the --encoder given (auto: libx264 for most containers)\n"
          "        local enc=libx264\n"
          "        for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "            if [ \"${COMP_WORDS[i]}\" = --encoder ]; then\n"
          "                enc=${COMP_WORDS[i+1]}\n"
          "                [ \"$enc\" = = ] && enc=${COMP_WORDS[i+2]}\n"
          "            fi\n"
          "        done\n"
          "        COMPREPLY=($(compgen -W \"$(_vkcu_encoder_presets \"$enc\")\" -- \"$cur\"))\n"
          "        return 0\n"
          "    elif [ -n \"$words\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "        return 0\n"
          "    elif [ \"$what\" = preset ]; then\n"
          "        COMPREPLY=($(compgen -W \"$(_vkcu_presets \"${COMP_WORDS[0]}\")\" -- \"$cur\"))\n"
          "        compopt -o filenames 2> /dev/null\n"
          "        COMPREPLY+=($(compgen -f -X '!*.pipe' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
          "        return 0\n"
          "    elif [ \"$what\" = file ]; then\n"
          "        compopt -o filenames 2> /dev/null\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    local dashdash=0\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do [ \"${COMP_WORDS[i]}\" = -- ] && dashdash=1; done\n"
          "    if [ $dashdash = 0 ] && [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    if [ \"$COMP_CWORD\" = 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '",
          out);
    for (int v = 1; v < CLI_NB_VERBS; v++)
        fprintf(out, "%s%s", v > 1 ? " " : "", cli_verb_docs[v].name);
    fputs(" help' -- \"$cur\"))\n"
          "    fi\n"
          "    case $verb in\n"
          "    probe|formats) ;;\n"
          "    help) [ \"$COMP_CWORD\" = 2 ] && COMPREPLY=($(compgen -W '",
          out);
    for (int v = 1; v < CLI_NB_VERBS; v++)
        fprintf(out, "%s%s", v > 1 ? " " : "", cli_verb_docs[v].name);
    fputs("' -- \"$cur\")) ;;\n"
          "    pipelines) COMPREPLY+=($(compgen -W \"$(_vkcu_presets \"${COMP_WORDS[0]}\")\" -- \"$cur\")) ;;\n"
          "    batch) compopt -o dirnames 2> /dev/null; COMPREPLY+=($(compgen -d -- \"$cur\")) ;;\n"
          "    *) compopt -o filenames 2> /dev/null; COMPREPLY+=($(compgen -f -- \"$cur\")) ;;\n"
          "    esac\n"
          "    return 0\n"
          "}\n"
          "complete -F _vkcu vkcu\n",
          out);
}
