/* SPDX-License-Identifier: MIT */
/* Fuzz target: json_scan accepts only what jansson accepts, and reads the
 * same values (json_scan.h's contract, which the protocol's fast lanes rely
 * on to decode exactly as the jansson path would). */
#include "fuzz.h"
#include "json_scan_agree.h"

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct json_scan s;
    const char *line = (const char *) data;
    if (json_scan_parse (&s, line, size) != 0)
        return 0;
    json_error_t je;
    json_t *o = json_loadb (line, size, JSON_REJECT_DUPLICATES, &je);
    FUZZ_CHECK (o != NULL, "json_scan accepted what jansson refuses: %s", je.text);
    char why[200] = "";
    FUZZ_CHECK (json_scan_agrees (&s, 0, o, why, sizeof (why)) == s.ntokens, "%s", why);
    json_decref (o);
    return 0;
}
