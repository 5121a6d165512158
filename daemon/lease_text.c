/* A grant's lease object as JSON text, encoded once and spliced into the
 * acquire reply, the granted event and the journal record: the object is the
 * same in all three, and encoding it three times was most of what a grant
 * cost. The members come from the codec (proto_lease_json), so the text is
 * the codec's; only the "env" member is encoded apart, to go where asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berthd.h"

void json_real_text (double v, char *buf, size_t size)
{
    /* as jansson writes a real: 17 significant digits, and always a dot or
     * an exponent, so that it reads back as a real */
    int n = snprintf (buf, size, "%.17g", v);
    if (n > 0 && (size_t) n + 2 < size && !strpbrk (buf, ".eE"))
        memcpy (buf + n, ".0", 3);
}

void lease_text_free (struct lease_text *t)
{
    free (t->body);
    free (t->env);
    memset (t, 0, sizeof (*t));
}

int lease_text_build (const struct lease *ls, struct lease_text *t)
{
    struct proto_lease pl;
    memset (t, 0, sizeof (*t));
    lease_to_proto (ls, false, &pl);
    json_t *o = proto_lease_json (&pl), *env = NULL;
    t->body = o ? json_dumps (o, JSON_COMPACT) : NULL;
    json_decref (o);
    if (ls->nenv > 0) {
        env = json_object ();
        for (int i = 0; env && i < ls->nenv; i++)
            if (json_object_set_new (env, ls->env[i].name,
                                     json_string (ls->env[i].value)) < 0) {
                json_decref (env);
                env = NULL;
            }
        t->env = env ? json_dumps (env, JSON_COMPACT) : NULL;
        json_decref (env);
    }
    json_real_text (ls->granted, t->time, sizeof (t->time));
    if (!t->body || (ls->nenv > 0 && !t->env) || t->body[0] != '{') {
        lease_text_free (t);
        return -1;
    }
    t->len = strlen (t->body);
    t->envlen = t->env ? strlen (t->env) : 0;
    return 0;
}

/* head, the lease's members (with "env" when asked and known), tail, and
 * the newline: a new string, *len its length; NULL when out of memory. */
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
