/* SPDX-License-Identifier: MIT */
/* Watch events encoded, as berthd sends them. */
#include <string.h>

#include "codec_internal.h"

void proto_event_free (struct proto_event *ev)
{
    if (!ev)
        return;
    proto_lease_free (&ev->lease);
    free (ev->label);
    free (ev->why);
    proto_outcome_destroy (ev->outcome);
    free (ev->job_id);
    free (ev->machine);
    json_decref (ev->nodes);
    memset (ev, 0, sizeof (*ev));
    proto_lease_init (&ev->lease);
}

json_t *proto_event_waited (double time, const char *label, int position,
                            const char *why)
{
    return json_pack ("{s:s s:f s:s? s:i s:s}", "event", "waited", "time", time,
                      "label", label, "position", position, "why", why ? why : "");
}

json_t *proto_event_released (double time, const char *lease, const char *label,
                              const char *reason)
{
    return lease ? json_pack ("{s:s s:f s:s s:s? s:s}", "event", "released", "time",
                              time, "lease", lease, "label", label, "reason",
                              reason ? reason : "released")
                 : NULL;
}

json_t *proto_event_refused (double time, const char *label, const berth_error_t *why)
{
    char text[sizeof (why->text)];
    codec_utf8_clean (why ? why->text : "", text, sizeof (text));
    return json_pack ("{s:s s:f s:s? s:{s:s s:s}}", "event", "refused", "time", time,
                      "label", label, "error", "code",
                      why && why->code ? why->code : PROTO_ERR_INTERNAL, "message", text);
}

json_t *proto_event_allocation (double time, const char *job_id, const char *machine,
                                json_t *nodes)
{
    return nodes ? json_pack ("{s:s s:f s:s? s:s? s:o}", "event", "allocation", "time",
                              time, "job_id", job_id, "machine", machine, "nodes", nodes)
                 : NULL;
}

