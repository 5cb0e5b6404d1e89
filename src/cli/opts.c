/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The parser of the option table (table.c): turns argv into (option,
 * value) pairs checked against the table's types and ranges, and answers
 * mistakes with one line that says what to type instead: the nearest option
 * name, the verb that has the option, or the vkcu spelling of an ffmpeg
 * option.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <vkcu/common.h>
#include <vkcu/number.h>

#include "opts.h"

/* Times are at most this many seconds (about 31 years): far past any
 * input, and small enough that seconds * 1e6 stays an exact int64. */
#define TIME_MAX_SECONDS 1e9

/* Options a verb knows only to say why it does not take them. */
typedef struct cli_refusal {
    enum cli_verb_id verb;
    enum cli_opt_id id;
    const char *why;
} cli_refusal;

static const cli_refusal refusals[] = {
    { CLI_VERIFY, OPT_CHAIN, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_PIPELINE, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_START, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_DURATION, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_FRAMES, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_STRICT, "belongs in a manifest case, not on the command line" },
    { CLI_VERIFY, OPT_STATS, "belongs in a manifest case, not on the command line" },
};

/* ffmpeg's options, as people type them out of habit, and vkcu's way of
 * saying the same thing. `option` is the vkcu option (its long name) when
 * there is one, so the hint can say whether this verb takes it. */
typedef struct ffmpeg_hint {
    const char *ffmpeg;
    const char *option; /* long name without "--", or NULL */
    const char *say;    /* what to type */
} ffmpeg_hint;

static const ffmpeg_hint ffmpeg_hints[] = {
    { "-i", NULL, "the input is an operand, without -i" },
    { "-ss", "start", "--start T" },
    { "-t", "duration", "--duration T" },
    { "-to", "duration", "--duration T (the length from --start, not the end time)" },
    { "-c:v", "encoder", "--encoder NAME" },
    { "-codec:v", "encoder", "--encoder NAME" },
    { "-vcodec", "encoder", "--encoder NAME" },
    { "-c", "encoder", "--encoder NAME" },
    { "-an", "no-audio", "--no-audio" },
    { "-c:a", "audio-encoder", "--audio-encoder NAME" },
    { "-codec:a", "audio-encoder", "--audio-encoder NAME" },
    { "-acodec", "audio-encoder", "--audio-encoder NAME" },
    { "-b:v", "bitrate", "--bitrate B" },
    { "-b", "bitrate", "--bitrate B" },
    { "-vf", "chain", "--chain TEXT, with vkcu's operators ('vkcu pipelines' lists them)" },
    { "-filter:v", "chain", "--chain TEXT, with vkcu's operators ('vkcu pipelines' lists them)" },
    { "-filter_complex", "chain", "--chain TEXT, with vkcu's operators ('vkcu pipelines' lists them)" },
    { "-lavfi", "chain", "--chain TEXT, with vkcu's operators ('vkcu pipelines' lists them)" },
    { "-s", "chain", "--chain scale=w=W:h=H" },
    { "-r", "chain", "--chain fps=RATE" },
    { "-pix_fmt", "chain", "--chain convert=format=FORMAT" },
    { "-g", "gop", "--gop N" },
    { "-frames:v", "frames", "--frames N" },
    { "-vframes", "frames", "--frames N" },
    { "-frames", "frames", "--frames N" },
    { "-threads", "decode-threads", "--decode-threads N" },
    { "-hwaccel", "backend", "--backend gpu" },
    { "-map", "audio-stream", "--video-stream N (one video stream), --audio-stream N|all|none and --subtitle-stream "
      "N|all|none (-map 0:a:1 is --audio-stream 1)" },
    { "-map", "video-stream", "--video-stream N (vkcu processes one video stream)" },
    { "-loglevel", "log-level", "--log-level LEVEL" },
    { "-v", "log-level", "--log-level LEVEL" },
    { "-movflags", "faststart", "--faststart" },
    { "-x264-params", "encoder-opt", "--encoder-opt x264-params=K=V" },
    { "-x265-params", "encoder-opt", "--encoder-opt x265-params=K=V" },
    { "-q:v", "crf", "--crf N" },
    { "-hide_banner", NULL, "vkcu prints no banner" },
    { "-nostdin", NULL, "vkcu does not read the terminal" },
};

/* One thing named differently by two verbs: `name` (another verb's option)
 * is this verb's `option`. */
typedef struct cli_synonym {
    enum cli_verb_id verb;
    const char *name, *option; /* long names without "--" */
} cli_synonym;

static const cli_synonym synonyms[] = {
    { CLI_COMPARE, "html", "report" }, /* verify's one-page --html is compare's --report */
    { CLI_VERIFY, "report", "html" },
};

/* The verb being parsed, for "see vkcu VERB --help". */
static enum cli_verb_id current_verb = CLI_TRANSCODE;

int cli_usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "vkcu: error: %s (see vkcu%s%s --help)\n", msg, current_verb ? " " : "",
            current_verb ? cli_verb_docs[current_verb].name : "");
    return VKCU_EXIT_USAGE;
}

const char *cli_option_spelling(const cli_option *o, char *buf, size_t size)
{
    if (o->name)
        snprintf(buf, size, "--%s", o->name);
    else
        snprintf(buf, size, "-%c", o->short_name);
    return buf;
}

static int sets(const cli_option *o, const char *setting)
{
    size_t n = strlen(setting);
    for (const char *w = o->setting; w && *w; w += strcspn(w, " "), w += *w == ' ')
        if (!strncmp(w, setting, n) && (w[n] == ' ' || !w[n]))
            return 1;
    return 0;
}

const char *cli_setting_name(void *opaque, const char *setting, const char *value, char *buf, size_t size)
{
    (void)opaque;
    /* The row of the verb being run, else any row (-y is -y everywhere). */
    const cli_option *found = NULL;
    for (int i = 0; i < cli_nb_options; i++) {
        const cli_option *o = &cli_options[i];
        if (!sets(o, setting) || o->flags & CLI_HIDDEN)
            continue;
        if (!found || (o->verbs & CLI_V(current_verb) && !(found->verbs & CLI_V(current_verb))))
            found = o;
    }
    if (!found)
        return NULL;
    char spelling[64];
    cli_option_spelling(found, spelling, sizeof(spelling));
    /* A time option's second setting is its frame form, typed NNNf. */
    int frames = found->type == CLI_ARG_TIME && strncmp(found->setting, setting, strlen(setting)) != 0;
    if (value && found->type != CLI_ARG_NONE)
        snprintf(buf, size, "%s %s%s", spelling, value, frames ? "f" : "");
    else
        snprintf(buf, size, "%s", spelling);
    return buf;
}

enum cli_verb_id cli_verb_by_name(const char *name)
{
    for (int v = 1; v < CLI_NB_VERBS; v++)
        if (!strcmp(name, cli_verb_docs[v].name))
            return (enum cli_verb_id)v;
    return CLI_NB_VERBS;
}

static int takes(const cli_option *o, enum cli_verb_id verb)
{
    return (o->verbs & CLI_V(verb)) != 0;
}

const cli_option *cli_find_option(enum cli_verb_id verb, const char *name)
{
    for (int i = 0; i < cli_nb_options; i++)
        if (takes(&cli_options[i], verb) && cli_options[i].name && !strcmp(cli_options[i].name, name))
            return &cli_options[i];
    return NULL;
}

static const cli_option *find_short(enum cli_verb_id verb, char c)
{
    for (int i = 0; i < cli_nb_options; i++)
        if (takes(&cli_options[i], verb) && cli_options[i].short_name == c)
            return &cli_options[i];
    return NULL;
}

/* The one entry of any verb with that long name, for "an option of ...". */
static unsigned verbs_with_long(const char *name)
{
    unsigned v = 0;
    for (int i = 0; i < cli_nb_options; i++)
        if (cli_options[i].name && !(cli_options[i].flags & CLI_HIDDEN) && !strcmp(cli_options[i].name, name))
            v |= cli_options[i].verbs;
    return v;
}

static unsigned verbs_with_short(char c)
{
    unsigned v = 0;
    for (int i = 0; i < cli_nb_options; i++)
        if (cli_options[i].short_name == c && !(cli_options[i].flags & CLI_HIDDEN))
            v |= cli_options[i].verbs;
    return v;
}

/* "vkcu hash, vkcu batch" for messages. */
static void verb_list(unsigned verbs, char *buf, size_t size)
{
    buf[0] = 0;
    for (int v = 0; v < CLI_NB_VERBS; v++)
        if (verbs & CLI_V(v)) {
            size_t n = strlen(buf);
            snprintf(buf + n, size - n, "%s'vkcu %s'", n ? ", " : "", v ? cli_verb_docs[v].name : "INPUT -o OUTPUT");
        }
}

const char *cli_nearest_verb(const char *name)
{
    for (int v = 1; v < CLI_NB_VERBS; v++) {
        size_t len = strlen(cli_verb_docs[v].name);
        if (cli_edit_distance(name, cli_verb_docs[v].name) <= (len > 5 ? 2 : 1))
            return cli_verb_docs[v].name;
    }
    return NULL;
}

/* The verb's visible long option nearest to `name`, if near enough to be a
 * typo of it (util/near.h: at most 2 edits, fewer than half the letters, a
 * prefix ("--dur") as good as one edit). */
static const cli_option *nearest_option(enum cli_verb_id verb, const char *name)
{
    const char *names[cli_nb_options];
    const cli_option *of[cli_nb_options];
    int n = 0;
    for (int i = 0; i < cli_nb_options; i++) {
        const cli_option *o = &cli_options[i];
        if (!takes(o, verb) || !o->name || (o->flags & CLI_HIDDEN))
            continue;
        names[n] = o->name;
        of[n++] = o;
    }
    const char *best = cli_nearest_word(name, names, n);
    for (int i = 0; best && i < n; i++)
        if (names[i] == best)
            return of[i];
    return NULL;
}

static const char *verb_prefix(enum cli_verb_id verb, char *buf, size_t size)
{
    if (verb == CLI_TRANSCODE)
        snprintf(buf, size, "%s", "");
    else
        snprintf(buf, size, "%s: ", cli_verb_docs[verb].name);
    return buf;
}

/* The one-line answer to an option this verb does not have. `arg` is the
 * whole argument as typed ("--jbos=2", "-ss"). */
static int unknown_option(enum cli_verb_id verb, const char *arg)
{
    char pre[32], name[128], verbs[256];
    verb_prefix(verb, pre, sizeof(pre));
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
    for (size_t k = 0; k < sizeof(ffmpeg_hints) / sizeof(ffmpeg_hints[0]); k++) {
        const ffmpeg_hint *h = &ffmpeg_hints[k];
        if (strcmp(name, h->ffmpeg))
            continue;
        /* Several rows for one habit (-map): the first whose option this verb has. */
        int later = 0;
        for (size_t m = k + 1; h->option && !cli_find_option(verb, h->option) &&
                               m < sizeof(ffmpeg_hints) / sizeof(ffmpeg_hints[0]); m++)
            later |= !strcmp(name, ffmpeg_hints[m].ffmpeg) && ffmpeg_hints[m].option &&
                     cli_find_option(verb, ffmpeg_hints[m].option);
        if (later)
            continue;
        if (!h->option)
            return cli_usage_error("%sunknown option '%s': %s (ffmpeg's %s needs no counterpart)", pre, name, h->say,
                                   h->ffmpeg);
        if (cli_find_option(verb, h->option))
            return cli_usage_error("%sunknown option '%s': did you mean %s? (ffmpeg's %s)", pre, name, h->say,
                                   h->ffmpeg);
        verb_list(verbs_with_long(h->option), verbs, sizeof(verbs));
        return cli_usage_error("%sunknown option '%s': ffmpeg's %s is vkcu's %s, an option of %s", pre, name,
                               h->ffmpeg, h->say, verbs);
    }
    const char *bare = name + (name[1] == '-' ? 2 : 1);
    const cli_option *o = cli_find_option(verb, bare);
    if (o && name[1] != '-') /* "-frames": ffmpeg's single dash */
        return cli_usage_error("%sunknown option '%s': did you mean --%s?", pre, name, o->name);
    unsigned elsewhere = name[1] != '-' && !name[2] ? verbs_with_short(name[1]) : verbs_with_long(bare);
    for (size_t k = 0; name[1] == '-' && k < sizeof(synonyms) / sizeof(synonyms[0]); k++) {
        const cli_option *mine = synonyms[k].verb == verb && !strcmp(synonyms[k].name, bare)
                                     ? cli_find_option(verb, synonyms[k].option) : NULL;
        if (!mine)
            continue;
        verb_list(elsewhere, verbs, sizeof(verbs));
        return cli_usage_error("%sunknown option '%s': did you mean --%s %s? ('%s' is an option of %s)", pre, name,
                               mine->name, mine->metavar ? mine->metavar : "", name, verbs);
    }
    if (elsewhere) {
        verb_list(elsewhere, verbs, sizeof(verbs));
        return cli_usage_error("%sunknown option '%s': it is an option of %s", pre, name, verbs);
    }
    if (*bare && (o = nearest_option(verb, bare)))
        return cli_usage_error("%sunknown option '%s': did you mean --%s?", pre, name, o->name);
    return cli_usage_error("%sunknown option '%s' (a file whose name starts with '-' goes after '--')", pre, name);
}

/* Whether a single-dash argument longer than one letter is an ffmpeg
 * habit ("-ss", "-c:v", "-hide_banner") or a long option typed with one
 * dash ("-crf"), rather than a group of short options: ffmpeg's spellings
 * win over groups ("-hwaccel" is not -h), a long name only when its first
 * letter is no short option of the verb ("-onull" stays -o null). */
static int habit(enum cli_verb_id verb, const char *a)
{
    char name[128];
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(a, "="), a);
    for (size_t k = 0; k < sizeof(ffmpeg_hints) / sizeof(ffmpeg_hints[0]); k++)
        if (!strcmp(name, ffmpeg_hints[k].ffmpeg))
            return 1;
    return !find_short(verb, a[1]) && verbs_with_long(name + 1);
}

/* Copies text[0, len) into buf as a string; 0 when it does not fit. */
static int copy_part(char *buf, size_t size, const char *text, size_t len)
{
    if (len >= size)
        return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    return 1;
}

/* "12.5" seconds, "1:02.5", "01:02:03" or "250f" (a frame number). */
static int parse_time(const char *opt, const char *v, double *seconds, int64_t *frames)
{
    char part[64];
    size_t n = strlen(v);
    *seconds = -1;
    *frames = -1;
    if (n > 1 && v[n - 1] == 'f') {
        int64_t f;
        if (!copy_part(part, sizeof(part), v, n - 1) || vkcu_parse_int(part, 0, INT64_MAX, &f) < 0)
            return cli_usage_error("%s: '%s' is not a frame number in [0, %lld] (e.g. 250f)", opt, v,
                                   (long long)INT64_MAX);
        *frames = f;
        return 0;
    }
    double total = 0;
    const char *p = v;
    int colons = 0;
    for (const char *c = v; *c; c++)
        colons += *c == ':';
    for (int k = 0; k < 3; k++) {
        size_t len = strcspn(p, ":");
        double x;
        if (!copy_part(part, sizeof(part), p, len) || vkcu_parse_number(part, 0, TIME_MAX_SECONDS, &x) < 0)
            break;
        /* "1:99" is a typo, not 159 s: only the first field may pass 59 */
        if (k > 0 && colons <= 2 && x >= 60)
            return cli_usage_error("%s: '%s' has %s above 59 (in [HH:]MM:SS only the first field may be; "
                                   "or give the time in seconds)", opt, v, k == colons ? "seconds" : "minutes");
        total = total * 60 + x;
        if (!p[len]) {
            if (total > TIME_MAX_SECONDS)
                break;
            *seconds = total;
            return 0;
        }
        p += len + 1;
    }
    return cli_usage_error("%s: '%s' is not a time in [0, %.0f] s (seconds, MM:SS or HH:MM:SS, or NNNf for frames)",
                           opt, v, TIME_MAX_SECONDS);
}

/* The index of v among "a, b or c"; -1 when it is none of them. */
static int choice_index(const char *choices, const char *v, int nocase)
{
    const char *p = choices;
    for (int i = 0; *p; i++) {
        size_t len = strcspn(p, ", ");
        if (!strncmp(p, "or ", 3)) {
            p += 3;
            len = strcspn(p, ", ");
        }
        if (len == strlen(v) && (nocase ? !strncasecmp(p, v, len) : !strncmp(p, v, len)))
            return i;
        p += len;
        p += strspn(p, ", ");
    }
    return -1;
}

/* The choice `v` is a typo of ("gpuu": "gpu"), into buf; 0 when none is near. */
static int nearest_choice(const char *choices, const char *v, char *buf, size_t size)
{
    int best_d = 3;
    for (const char *p = choices; *p;) {
        if (!strncmp(p, "or ", 3))
            p += 3;
        size_t len = strcspn(p, ", ");
        char word[64];
        if (copy_part(word, sizeof(word), p, len)) {
            int d = cli_edit_distance(v, word);
            if (strlen(v) >= 2 && !strncmp(word, v, strlen(v))) /* "warn" for warning */
                d = 1;
            if (d < best_d && (size_t)d * 2 < len) {
                best_d = d;
                snprintf(buf, size, "%s", word);
            }
        }
        p += len;
        p += strspn(p, ", ");
    }
    return best_d < 3;
}

/* Checks `v` against o's type and range. 0, or the exit status after the
 * error. `typed` is the option as the user wrote it. */
static int parse_value(const cli_option *o, const char *typed, const char *v, cli_value *out)
{
    switch (o->type) {
    case CLI_ARG_INT:
        if (vkcu_parse_int(v, (int64_t)o->lo, (int64_t)o->hi, &out->i) < 0)
            return cli_usage_error("%s: '%s' is not an integer in [%.0f, %.0f]", typed, v, o->lo, o->hi);
        return 0;
    case CLI_ARG_NUMBER:
        if (vkcu_parse_number(v, o->lo, o->hi, &out->d) < 0)
            return cli_usage_error("%s: '%s' is not a number in [%.15g, %.15g]", typed, v, o->lo, o->hi);
        return 0;
    case CLI_ARG_BITRATE:
        if (vkcu_parse_bitrate(v, &out->i) < 0)
            return cli_usage_error("%s: '%s' is not a bitrate in [1k, %lldM] bit/s (e.g. 4M, 800k)", typed, v,
                                   VKCU_BITRATE_MAX / 1000000);
        return 0;
    case CLI_ARG_TIME:
        return parse_time(typed, v, &out->seconds, &out->frame);
    case CLI_ARG_PICK: {
        int k = choice_index(o->choices, v, (o->flags & CLI_NOCASE) != 0);
        if (k >= 0) {
            out->i = -1 - k;
            return 0;
        }
        if (vkcu_parse_int(v, (int64_t)o->lo, (int64_t)o->hi, &out->i) < 0)
            return cli_usage_error("%s: '%s' is not an integer in [%.0f, %.0f], nor %s", typed, v, o->lo, o->hi,
                                   o->choices);
        return 0;
    }
    case CLI_ARG_CHOICE: {
        int k = choice_index(o->choices, v, (o->flags & CLI_NOCASE) != 0);
        if (k < 0) {
            char near[64];
            if (nearest_choice(o->choices, v, near, sizeof(near)))
                return cli_usage_error("%s: '%s' is not %s: did you mean %s?", typed, v, o->choices, near);
            return cli_usage_error("%s: '%s' is not %s", typed, v, o->choices);
        }
        out->i = k;
        return 0;
    }
    default:
        return 0;
    }
}

static int refused(enum cli_verb_id verb, const cli_option *o, const char *typed)
{
    for (size_t k = 0; k < sizeof(refusals) / sizeof(refusals[0]); k++)
        if (refusals[k].verb == verb && refusals[k].id == o->id)
            return cli_usage_error("%s: %s %s", cli_verb_docs[verb].name, typed, refusals[k].why);
    return 0;
}

/* The entry an option refused by this verb has in another verb (for its
 * type: a refused option still consumes its value). */
static const cli_option *find_refused(enum cli_verb_id verb, const char *name, char short_name)
{
    for (size_t k = 0; k < sizeof(refusals) / sizeof(refusals[0]); k++) {
        if (refusals[k].verb != verb)
            continue;
        for (int i = 0; i < cli_nb_options; i++) {
            const cli_option *o = &cli_options[i];
            if (o->id == refusals[k].id &&
                ((name && o->name && !strcmp(o->name, name)) || (!name && short_name && o->short_name == short_name)))
                return o;
        }
    }
    return NULL;
}

/* One option with its value (NULL for a flag): refusals, the value's
 * check, the built-in requests (help), then the verb's apply. */
static int take(enum cli_verb_id verb, const cli_option *o, const char *typed, const char *v, cli_apply_fn apply,
                void *ctx)
{
    int ret = refused(verb, o, typed);
    if (ret)
        return ret;
    cli_value val = { 0, 0, -1, -1 };
    if (v && (ret = parse_value(o, typed, v, &val)))
        return ret;
    if (o->id == OPT_HELP)
        return CLI_HELP_REQUESTED;
    if (o->id == OPT_DUMP_OPTIONS)
        return CLI_OPTIONS_REQUESTED;
    return apply(ctx, o, v, &val);
}

static int needs_value(const cli_option *o, const char *typed)
{
    return cli_usage_error("%s needs a value (%s %s)", typed, typed, o->metavar ? o->metavar : "VALUE");
}

/* A short option group "-yq", "-j2", "-ofile": returns the exit status,
 * 0 to go on; *i moves past a value taken from the next argument. */
static int short_group(enum cli_verb_id verb, int argc, char **argv, int *i, cli_apply_fn apply, void *ctx)
{
    const char *a = argv[*i];
    if (a[2] && habit(verb, a))
        return unknown_option(verb, a);
    for (const char *c = a + 1; *c; c++) {
        const cli_option *o = find_short(verb, *c);
        if (!o)
            o = find_refused(verb, NULL, *c);
        char typed[3] = { '-', *c, 0 };
        if (!o) /* "-ss", "-vf" and "-foo" are answered for the whole argument */
            return unknown_option(verb, c == a + 1 ? a : typed);
        if (o->type == CLI_ARG_NONE) {
            int ret = take(verb, o, typed, NULL, apply, ctx);
            if (ret)
                return ret;
            continue;
        }
        const char *v = c[1] ? c + 1 : *i + 1 < argc ? argv[++*i] : NULL;
        if (!v)
            return needs_value(o, typed);
        return take(verb, o, typed, v, apply, ctx);
    }
    return 0;
}

static int long_option(enum cli_verb_id verb, int argc, char **argv, int *i, cli_apply_fn apply, void *ctx)
{
    const char *a = argv[*i];
    char name[128], typed[132];
    size_t len = strcspn(a + 2, "=");
    if (!copy_part(name, sizeof(name), a + 2, len))
        return unknown_option(verb, a);
    snprintf(typed, sizeof(typed), "--%s", name);
    const cli_option *o = cli_find_option(verb, name);
    if (!o)
        o = find_refused(verb, name, 0);
    if (!o)
        return unknown_option(verb, a);
    const char *v = a[2 + len] == '=' ? a + 3 + len : NULL;
    if (o->type == CLI_ARG_NONE) {
        if (v)
            return cli_usage_error("%s takes no value ('%s')", typed, a);
    } else if (!v) {
        if (*i + 1 >= argc)
            return needs_value(o, typed);
        v = argv[++*i];
    }
    return take(verb, o, typed, v, apply, ctx);
}

int cli_apply_no_operands(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    char name[64];
    (void)v;
    if (!o)
        return cli_usage_error("%s: unknown argument '%s'", (const char *)ctx, arg);
    /* the table gives these verbs no option of their own */
    return cli_usage_error("%s: %s is not handled", (const char *)ctx, cli_option_spelling(o, name, sizeof(name)));
}

int cli_parse(enum cli_verb_id verb, int argc, char **argv, cli_apply_fn apply, void *ctx)
{
    int opts_done = 0;
    current_verb = verb;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int ret;
        if (opts_done || a[0] != '-' || !a[1])
            ret = apply(ctx, NULL, a, NULL);
        else if (!strcmp(a, "--")) {
            opts_done = 1;
            continue;
        } else if (a[1] == '-')
            ret = long_option(verb, argc, argv, &i, apply, ctx);
        else
            ret = short_group(verb, argc, argv, &i, apply, ctx);
        if (ret == CLI_STOP)
            return 0;
        if (ret)
            return ret;
    }
    return -1;
}
