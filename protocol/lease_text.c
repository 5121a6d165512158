/* SPDX-License-Identifier: MIT */
/* The lease object, and the lines that carry it, written straight to JSON
 * text (lease_text.h says why). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease_text.h"
#include "text.h"

/* Length of the UTF-8 sequence at p (well formed, no surrogates, no
 * overlong forms), 0 when it is not one. */
static size_t utf8_len (const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (!n || c > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)
        || (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
        return 0;
    return n;
}

void json_text_str (struct text_buf *b, const char *v)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *) v, *run = p;
    text_buf_put (b, "\"", 1);
    while (*p) {
        size_t n = utf8_len (p);
        if (!n) {
            b->bad = true;
            return;
        }
        if (n > 1 || (*p >= 0x20 && *p != '"' && *p != '\\')) {
            p += n;
            continue;
        }
        text_buf_put (b, (const char *) run, (size_t) (p - run));
        char e[7] = { '\\', 0 };
        switch (*p) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        default:
            memcpy (e + 1, "u00", 3);
            e[4] = hex[*p >> 4];
            e[5] = hex[*p & 15];
        }
        text_buf_puts (b, e);
        run = ++p;
    }
    text_buf_put (b, (const char *) run, (size_t) (p - run));
    text_buf_put (b, "\"", 1);
}

static void put_str_or_null (struct text_buf *b, const char *v)
{
    if (v)
        json_text_str (b, v);
    else
        text_buf_puts (b, "null");
}

void json_text_ids (struct text_buf *b, const int *v, int n)
{
    text_buf_put (b, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i)
            text_buf_put (b, ",", 1);
        text_buf_int (b, v[i]);
    }
    text_buf_put (b, "]", 1);
}

/* {"NAME": "value", ...} as jansson builds it from a list: a name given
 * twice keeps its first place and its last value. */
static void put_items (struct text_buf *b, const struct env_set_item *v, int n)
{
    text_buf_put (b, "{", 1);
    bool first = true;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp (v[j].name, v[i].name);
        if (seen)
            continue;
        int last = i;
        for (int j = i + 1; j < n; j++)
            if (!strcmp (v[j].name, v[i].name))
                last = j;
        if (!first)
            text_buf_put (b, ",", 1);
        first = false;
        json_text_str (b, v[i].name);
        text_buf_put (b, ":", 1);
        json_text_str (b, v[last].value);
    }
    text_buf_put (b, "}", 1);
}

/* A wall-clock time (1e9 <= v < 1e10: ten digits, then seven after the
 * point) as %.17g writes it, without printf's arbitrary-precision path,
 * which cost more than the rest of a grant's text. v is exactly k / 2^s
 * (k its 53-bit mantissa), so its fraction scaled by 10^7 is rounded in
 * integers, to nearest with ties to even as printf does; trailing zeros
 * are dropped as %g drops them. 0: v is not such a time. */
static int time_text (double v, char *buf, size_t size)
{
    if (!(v >= 1e9 && v < 1e10) || size < 24)
        return 0;
    int e;
    double m = frexp (v, &e);                 /* v = m * 2^e, e in 30..34 */
    uint64_t k = (uint64_t) ldexp (m, 53);
    int s = 53 - e;
    uint64_t mask = ((uint64_t) 1 << s) - 1, half = (uint64_t) 1 << (s - 1);
    uint64_t ip = k >> s, scaled = (k & mask) * 10000000u;
    uint64_t q = scaled >> s, rem = scaled & mask;
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (q == 10000000u) {
        q = 0;
        ip++;
    }
    if (ip >= 10000000000u)
        return 0;
    char *p = buf + 10;
    for (int i = 9; i >= 0; i--, ip /= 10)
        buf[i] = (char) ('0' + ip % 10);
    *p++ = '.';
    if (q == 0)
        *p++ = '0';           /* json_real_text's ".0" */
    else {
        char d[7];
        for (int i = 6; i >= 0; i--, q /= 10)
            d[i] = (char) ('0' + q % 10);
        int n = 7;
        while (d[n - 1] == '0')
            n--;
        memcpy (p, d, (size_t) n);
        p += n;
    }
    *p = '\0';
    return 1;
}

void json_real_text (double v, char *buf, size_t size)
{
    if (time_text (v, buf, size))
        return;
    int n = snprintf (buf, size, "%.17g", v);
    if (n < 0 || (size_t) n >= size)
        return;
    char *e = strchr (buf, 'e');
    if (e) {
        /* jansson: no '+' and no leading zeros in an exponent */
        char *d = e + 1, *s = d;
        if (*s == '-')
            d++, s++;
        else if (*s == '+')
            s++;
        while (*s == '0' && s[1])
            s++;
        memmove (d, s, strlen (s) + 1);
    }
    else if (!strchr (buf, '.') && (size_t) n + 2 < size)
        memcpy (buf + n, ".0", 3);
}

void lease_text_free (struct lease_text *t)
{
    free (t->body);
    free (t->env);
    memset (t, 0, sizeof (*t));
}

int lease_text_build (const struct proto_lease *l, struct lease_text *t)
{
    struct text_buf b = { 0 }, e = { 0 };
    const struct placement *p = &l->placement;
    memset (t, 0, sizeof (*t));
    for (int i = 0; i < p->nnodes; i++)
        if (!p->nodes[i].name)
            return -1;
    for (int i = 0; i < l->launch.n_set; i++)
        if (!l->launch.env_set[i].name || !l->launch.env_set[i].value)
            return -1;
    for (int i = 0; i < l->nenv; i++)
        if (!l->env[i].name || !l->env[i].value)
            return -1;
    if (!l->id || p->nnodes < 1)
        return -1;
    text_buf_puts (&b, "{\"lease\":");
    json_text_str (&b, l->id);
    text_buf_puts (&b, ",\"label\":");
    put_str_or_null (&b, l->label);
    text_buf_puts (&b, ",\"placement\":{\"nodes\":[");
    for (int i = 0; i < p->nnodes; i++) {
        if (i)
            text_buf_put (&b, ",", 1);
        json_text_str (&b, p->nodes[i].name);
    }
    text_buf_puts (&b, "],\"cores\":[");
    for (int i = 0; i < p->nnodes; i++) {
        if (i)
            text_buf_put (&b, ",", 1);
        json_text_ids (&b, p->nodes[i].cores, p->nodes[i].ncores);
    }
    text_buf_puts (&b, "],\"gpus\":");
    text_buf_int (&b, p->gpus);
    text_buf_puts (&b, ",\"gpu_ids\":");
    /* zero GPUs are stated as such; unknown indices of some are null */
    if (p->ngpu_ids > 0 || p->gpus == 0)
        json_text_ids (&b, p->gpu_ids, p->ngpu_ids);
    else
        text_buf_puts (&b, "null");
    text_buf_puts (&b, "},\"memory_cap\":");
    if (l->memory_cap >= 0)
        text_buf_int (&b, l->memory_cap);
    else
        text_buf_puts (&b, "null");
    text_buf_puts (&b, ",\"budget_mb\":");
    if (l->budget_mb >= 0)
        text_buf_int (&b, l->budget_mb);
    else
        text_buf_puts (&b, "null");
    if (l->launch.argv) {
        text_buf_puts (&b, ",\"argv\":[");
        for (int i = 0; l->launch.argv[i]; i++) {
            if (i)
                text_buf_put (&b, ",", 1);
            json_text_str (&b, l->launch.argv[i]);
        }
        text_buf_put (&b, "]", 1);
    }
    text_buf_puts (&b, ",\"env_delta\":{\"unset\":[");
    for (int i = 0; i < l->launch.n_unset; i++) {
        if (i)
            text_buf_put (&b, ",", 1);
        json_text_str (&b, l->launch.env_unset[i]);
    }
    text_buf_puts (&b, "],\"set\":");
    put_items (&b, l->launch.env_set, l->launch.n_set);
    text_buf_put (&b, "}", 1);
    if (l->owner_pid > 0) {
        text_buf_puts (&b, ",\"owner_pid\":");
        text_buf_int (&b, l->owner_pid);
    }
    json_real_text (l->granted, t->time, sizeof (t->time));
    if (l->granted >= 0) {
        text_buf_puts (&b, ",\"granted\":");
        text_buf_puts (&b, t->time);
    }
    text_buf_put (&b, "}", 1);
    if (l->env)
        put_items (&e, l->env, l->nenv);
    if (b.bad || e.bad) {
        free (b.s);
        free (e.s);
        memset (t, 0, sizeof (*t));
        return -1;
    }
    t->body = b.s;
    t->len = b.len;
    t->env = e.s;
    t->envlen = e.len;
    return 0;
}

char *json_text_end_line (struct text_buf *b, size_t *len)
{
    text_buf_put (b, "}\n", 2);
    if (b->bad) {
        free (b->s);
        return NULL;
    }
    *len = b->len;
    return b->s;
}

char *released_event_line_at (const char *time, const char *lease,
                              const char *label, const char *reason,
                              size_t *len)
{
    return released_event_line_outcome (time, lease, label, reason, NULL, len);
}

char *released_event_line_outcome (const char *time, const char *lease,
                                   const char *label, const char *reason,
                                   const struct proto_outcome *outcome,
                                   size_t *len)
{
    struct text_buf b = { 0 };
    char *o = NULL;
    if (!lease || !time)
        return NULL;
    if (outcome) {
        /* small, and rare beside the lease's own text: jansson writes it */
        json_t *j = proto_outcome_json (outcome);
        o = j ? json_dumps (j, JSON_COMPACT) : NULL;
        json_decref (j);
        if (!o)
            return NULL;
    }
    text_buf_puts (&b, "{\"event\":\"released\",\"time\":");
    text_buf_puts (&b, time);
    text_buf_puts (&b, ",\"lease\":");
    json_text_str (&b, lease);
    text_buf_puts (&b, ",\"label\":");
    put_str_or_null (&b, label);
    text_buf_puts (&b, ",\"reason\":");
    json_text_str (&b, reason ? reason : "released");
    if (o) {
        text_buf_puts (&b, ",\"outcome\":");
        text_buf_puts (&b, o);
        free (o);
    }
    return json_text_end_line (&b, len);
}

char *released_event_line (double time, const char *lease, const char *label,
                           const char *reason, size_t *len)
{
    char t[40];
    json_real_text (time, t, sizeof (t));
    return released_event_line_at (t, lease, label, reason, len);
}

char *release_reply_line (const json_t *id, const char *lease, size_t *len)
{
    struct text_buf b = { 0 };
    if (!lease)
        return NULL;
    text_buf_puts (&b, "{\"id\":");
    if (json_is_integer (id))
        text_buf_int (&b, json_integer_value (id));
    else if (json_is_string (id))
        json_text_str (&b, json_string_value (id));
    else
        text_buf_puts (&b, "null");
    text_buf_puts (&b, ",\"ok\":true,\"lease\":");
    json_text_str (&b, lease);
    return json_text_end_line (&b, len);
}

char *lease_text_line (const struct lease_text *t, const char *head,
                       bool with_env, const char *tail, size_t *len)
{
    bool env = with_env && t->env;
    size_t hl = strlen (head), tl = strlen (tail);
    size_t members = t->len - 2;               /* without the braces */
    size_t n = hl + members + (env ? 7 + t->envlen : 0) + tl + 1;
    char *s = malloc (n + 1), *p = s;
    if (!s)
        return NULL;
    memcpy (p, head, hl);
    p += hl;
    memcpy (p, t->body + 1, members);
    p += members;
    if (env) {
        memcpy (p, ",\"env\":", 7);
        memcpy (p + 7, t->env, t->envlen);
        p += 7 + t->envlen;
    }
    memcpy (p, tail, tl);
    p += tl;
    *p++ = '\n';
    *p = '\0';
    *len = n;
    return s;
}

/* {"id":<request>,"ok":true,["warning":...,]<the lease>[,"env":...]} */
char *grant_reply_line (const struct lease_text *t, const char *request,
                        const char *warning, bool with_env, size_t *len)
{
    struct text_buf b = { 0 };
    text_buf_puts (&b, "{\"id\":");
    text_buf_puts (&b, request ? request : "null");
    text_buf_puts (&b, ",\"ok\":true,");
    if (warning) {
        text_buf_puts (&b, "\"warning\":");
        json_text_str (&b, warning);
        text_buf_put (&b, ",", 1);
    }
    if (b.bad) {
        free (b.s);
        return NULL;
    }
    char *line = lease_text_line (t, b.s, with_env, "}", len);
    free (b.s);
    return line;
}

char *granted_event_line (const struct lease_text *t, size_t *len)
{
    char head[96];
    snprintf (head, sizeof (head), "{\"event\":\"granted\",\"time\":%s,",
              t->time);
    return lease_text_line (t, head, false, "}", len);
}
