/* SPDX-License-Identifier: MIT */
/* Fuzz target: the INI reader of machine files. The input is one or two
 * files (split at a line "#--layer--"), loaded in order as --config layers
 * are. Every key of every section, and of [DEFAULT], is read interpolated
 * (config_get), with its origin; a failed load changes nothing; a key that
 * is listed is found. */
#include "config.h"
#include "fuzz.h"

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    return 0;
}

static void read_section (struct config *cfg, const char *section)
{
    berth_error_t err;
    size_t n = config_key_count (cfg, section);
    for (size_t k = 0; k < n; k++) {
        const char *key = config_key_name (cfg, section, k), *value, *file;
        int line;
        FUZZ_CHECK (key, "key %zu of [%s] has a name", k, section);
        FUZZ_CHECK (config_get_raw (cfg, section, key), "listed key [%s] %s is found",
                    section, key);
        if (config_get (cfg, section, key, &value, &err) == 0)
            FUZZ_CHECK (value, "[%s] %s has a value", section, key);
        else
            FUZZ_CHECK (err.text[0], "a failed interpolation says why");
        /* twice: the second answer comes from the cache */
        if (config_get (cfg, section, key, &value, &err) == 0)
            FUZZ_CHECK (value, "[%s] %s has a value (cached)", section, key);
        FUZZ_CHECK (config_origin (cfg, section, key, &file, &line) == 0,
                    "[%s] %s has an origin", section, key);
    }
    const char *v;
    (void) config_get (cfg, section, "no such key", &v, &err);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr (data, size);
    char *second = strstr (text, "\n#--layer--\n");
    if (second) {
        *second = '\0';
        second += strlen ("\n#--layer--\n");
    }
    struct config *cfg = config_create ();
    FUZZ_CHECK (cfg, "config_create");
    berth_error_t err;
    if (config_load_string (cfg, "fuzz.cfg", text, &err) < 0) {
        FUZZ_CHECK (err.text[0], "a refused file says why");
        FUZZ_CHECK (config_section_count (cfg) == 0, "a refused file adds nothing");
    }
    if (second) {
        size_t before = config_section_count (cfg);
        if (config_load_string (cfg, "layer.cfg", second, &err) < 0)
            FUZZ_CHECK (config_section_count (cfg) == before,
                        "a refused layer adds nothing");
        /* a fact set after the files is read like any value */
        (void) config_set (cfg, "parallel", "cores_per_node", "${DEFAULT:x}7", "fuzz", &err);
    }
    read_section (cfg, "DEFAULT");
    for (size_t i = 0; i < config_section_count (cfg); i++) {
        const char *name = config_section_name (cfg, i);
        FUZZ_CHECK (name && config_has_section (cfg, name), "section %zu is known", i);
        read_section (cfg, name);
    }
    config_destroy (cfg);
    free (text);
    return 0;
}
