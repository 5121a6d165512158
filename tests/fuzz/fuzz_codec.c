/* SPDX-License-Identifier: MIT */
/* Fuzz target: the wire codec, both sides. The input is one line as berthd
 * reads it (proto_decode_request) and as a client reads it
 * (proto_parse_message and the reply and event decoders).
 *  - the fast lane of request decoding (acquire, release) declines the line
 *    without touching the request, or decodes exactly what the jansson
 *    path decodes; it never takes a line the jansson path refuses;
 *  - a request that decodes encodes again (proto_encode_request) and that
 *    encoding decodes to the same request: nothing a client can send is
 *    understood differently after one more trip;
 *  - a refusal carries a stable code and a message, and its reply encodes;
 *  - a render request's placement goes where berthd sends it: validated,
 *    then rendered for a Slurm (both placement modes) and a PALS machine;
 *  - a lease, render reply or event that decodes re-encodes and decodes
 *    again. */
#include <jansson.h>

#include "codec.h"
#include "fuzz.h"
#include "launcher.h"
#include "machine.h"
#include "machine_select.h"
#include "render.h"
#include "request_fast.h"

static struct machine *machines[2];
static struct launcher_caps caps[3];

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    static const char *names[] = { "pm-cpu", "aurora" };
    static const char *specs[] = { "slurm:22.05", "slurm:20.02", "pals" };
    berth_error_t err;
    for (int i = 0; i < 2; i++) {
        struct machine_options mo = { .name = names[i] };
        if (machine_load (&mo, &machines[i], &err) < 0) {
            fprintf (stderr, "fuzz_codec: machine %s: %s\n", names[i], err.text);
            abort ();
        }
    }
    for (int i = 0; i < 3; i++)
        if (launcher_caps_parse (specs[i], i < 2 ? BERTH_SYSTEM_SLURM : BERTH_SYSTEM_PBS,
                                 &caps[i], &err) < 0) {
            fprintf (stderr, "fuzz_codec: caps %s: %s\n", specs[i], err.text);
            abort ();
        }
    return 0;
}

static void render_all (const struct proto_render *r)
{
    berth_error_t err;
    if (placement_validate (&r->placement, &err) < 0) {
        FUZZ_CHECK (err.text[0], "a refused placement says why");
        return;
    }
    for (int i = 0; i < 3; i++) {
        struct launch out;
        struct launch_request lr = {
            .argv = r->argv, .ntasks = r->ntasks, .cpus_per_task = r->cpus_per_task,
            .placement = &r->placement, .has_memory_cap = r->memory_cap >= 0,
            .memory_cap = r->memory_cap,
        };
        if (render_launch (&machines[i < 2 ? 0 : 1]->par, 4, &caps[i], &lr, &out,
                           &err) < 0) {
            FUZZ_CHECK (err.text[0], "a refused render says why");
            continue;
        }
        FUZZ_CHECK (out.argv && out.argv[0] && out.argc > 0, "a rendered launch has a program");
        /* berthd sends it back: the reply must encode */
        json_t *id = json_integer (1);
        json_t *reply = proto_render_reply (id, &out);
        FUZZ_CHECK (reply, "a rendered launch encodes as a reply");
        char *line = proto_line (reply);
        FUZZ_CHECK (line, "a render reply is one line");
        free (line);
        json_decref (reply);
        json_decref (id);
        launch_free (&out);
    }
}

static void fast_lane_agrees (const uint8_t *data, size_t size)
{
    struct proto_request fast, slow, pristine;
    berth_error_t err;
    char why[128];
    memset (&fast, 0x5a, sizeof (fast));
    memcpy (&pristine, &fast, sizeof (fast));
    int rf = proto_decode_request_fast ((const char *) data, size, &fast);
    int rs = proto_decode_request_jansson ((const char *) data, size, &slow, &err);
    FUZZ_CHECK (rf == 0 || rf == 1, "the fast lane answers 0 or 1, got %d", rf);
    if (rf == 1)
        FUZZ_CHECK (!memcmp (&fast, &pristine, sizeof (fast)),
                    "a declined line leaves the request untouched");
    else {
        FUZZ_CHECK (rs == 0, "the fast lane took a line jansson refuses: %s", err.text);
        FUZZ_CHECK (proto_request_same (&fast, &slow, why, sizeof (why)),
                    "the fast lane reads the line as jansson does: %s", why);
        proto_request_free (&fast);
    }
    proto_request_free (&slow);
}

static void request_side (const uint8_t *data, size_t size)
{
    fast_lane_agrees (data, size);

    struct proto_request req, again;
    berth_error_t err, err2;
    int rc = proto_decode_request ((const char *) data, size, &req, &err);
    if (rc < 0) {
        FUZZ_CHECK (err.code && (!strcmp (err.code, PROTO_ERR_INVALID_REQUEST)
                                 || !strcmp (err.code, PROTO_ERR_TOO_LARGE)),
                    "a refused request is invalid_request or too_large, got %s",
                    err.code ? err.code : "(null)");
        FUZZ_CHECK (err.text[0], "a refusal says why");
        json_t *reply = proto_error_reply (req.id, &err);
        char *line = reply ? proto_line (reply) : NULL;
        FUZZ_CHECK (line, "the error reply encodes: %s", err.text);
        FUZZ_CHECK (strchr (line, '\n') == line + strlen (line) - 1,
                    "the error reply is one line");
        free (line);
        json_decref (reply);
        proto_request_free (&req);
        return;
    }
    FUZZ_CHECK (req.id, "a decoded request has an id");
    json_t *enc = proto_encode_request (&req);
    FUZZ_CHECK (enc, "a decoded request (op %s) encodes again", proto_op_name (req.op));
    char *line = proto_line (enc);
    FUZZ_CHECK (line, "its encoding is a line");
    rc = proto_decode_request (line, strlen (line), &again, &err2);
    FUZZ_CHECK (rc == 0, "the re-encoded request decodes: %s (%s)", err2.text, line);
    FUZZ_CHECK (again.op == req.op, "same op after a round trip");
    json_t *enc2 = proto_encode_request (&again);
    FUZZ_CHECK (enc2 && json_equal (enc, enc2), "same request after a round trip: %s", line);
    if (req.op == PROTO_RENDER)
        render_all (&req.render);
    json_decref (enc2);
    json_decref (enc);
    free (line);
    proto_request_free (&again);
    proto_request_free (&req);
}

static void lease_round_trip (const struct proto_lease *l)
{
    berth_error_t err;
    json_t *j = proto_lease_json (l);
    if (!j)
        return;          /* a lease the codec cannot describe: refused, fine */
    struct proto_lease back;
    FUZZ_CHECK (proto_decode_lease (j, &back, &err) == 0,
                "a lease the codec wrote reads back: %s", err.text);
    json_t *j2 = proto_lease_json (&back);
    FUZZ_CHECK (j2 && json_equal (j, j2), "a lease survives a round trip");
    json_decref (j2);
    proto_lease_free (&back);
    json_decref (j);
}

static void reply_side (const uint8_t *data, size_t size)
{
    json_t *msg;
    berth_error_t err;
    if (proto_parse_message ((const char *) data, size, &msg, &err) < 0) {
        FUZZ_CHECK (err.text[0], "an unreadable reply says why");
        return;
    }
    (void) proto_is_event (msg);
    if (proto_reply_status (msg, &err) < 0)
        FUZZ_CHECK (err.code && err.text[0], "a failed reply has a code and a message");
    int version = -1;
    if (proto_decode_hello_reply (msg, &version, &err) == 0)
        FUZZ_CHECK (version >= 1, "a hello reply's version is positive");
    struct proto_lease l;
    if (proto_decode_lease (msg, &l, &err) == 0) {
        FUZZ_CHECK (l.id && l.placement.nnodes > 0, "a decoded lease has an id and nodes");
        lease_round_trip (&l);
        proto_lease_free (&l);
    }
    struct launch ln;
    if (proto_decode_render_reply (msg, &ln, &err) == 0) {
        FUZZ_CHECK (ln.argv && ln.argc > 0, "a decoded launch has argv");
        launch_free (&ln);
    }
    struct proto_event ev;
    if (proto_decode_event (msg, &ev, &err) == 0) {
        if (ev.kind == PROTO_EV_GRANTED)
            lease_round_trip (&ev.lease);
        proto_event_free (&ev);
    }
    json_decref (msg);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    request_side (data, size);
    reply_side (data, size);
    return 0;
}
