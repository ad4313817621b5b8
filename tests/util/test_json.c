/*
 * The JSON messages every settings reader shares (util/u_text.h): a malformed text is
 * placed by line and column with what was there, an empty file is said to be empty, and
 * a key given twice anywhere in the tree is refused by its path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "util/u_text.h"

/* u_json_parse_error's message for `text` as cJSON leaves it. */
static void
expect_parse_message(const char *text, const char *message)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    assert_null(root);
    struct em_error err = {{0}};
    assert_int_equal(u_json_parse_error(text, "f.json", end, &err), EM_ERROR_PARSE);
    assert_string_equal(err.message, message);
}

static void
malformed_json_is_placed_by_line_and_column_with_what_was_there(void **state)
{
    (void)state;
    expect_parse_message("{\n  \"a\": [1, 2,]\n}", "f.json:2:14: malformed JSON: unexpected ']'");
    expect_parse_message("{\"a\" 1}", "f.json:1:6: malformed JSON: unexpected '1'");
    expect_parse_message("{\"a\": {\"b\": 1}\n",
                         "f.json:2:1: malformed JSON: the text ends early (something left open)");
    expect_parse_message("  \n\t", "f.json: empty file, expected JSON");
}

/* u_json_check_unique_keys on `text`: "" when it passes, else its message. */
static void
expect_keys(const char *text, const char *message)
{
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    struct em_error err = {{0}};
    const enum em_result r = u_json_check_unique_keys(root, "f.json", &err);
    cJSON_Delete(root);
    if (!message[0]) {
        assert_int_equal(r, EM_OK);
        return;
    }
    assert_int_equal(r, EM_ERROR_PARSE);
    assert_string_equal(err.message, message);
}

static void
a_key_given_twice_is_refused_by_its_path(void **state)
{
    (void)state;
    expect_keys("{\"a\": 1, \"b\": {\"c\": 1, \"d\": 2}, \"e\": [{\"f\": 1}, {\"f\": 2}]}", "");
    expect_keys("{\"a\": 1, \"a\": 2}", "f.json: a: given twice (each key once)");
    expect_keys("{\"a\": 1, \"b\": {\"c\": {\"x\": 1, \"y\": 2, \"x\": 3}}}",
                "f.json: b.c.x: given twice (each key once)");
    /* The path of a sibling looked at before does not leak into the next one's. */
    expect_keys("{\"long_name\": {\"p\": 1}, \"b\": {\"q\": 1, \"q\": 2}}",
                "f.json: b.q: given twice (each key once)");
    expect_keys("{\"e\": [{\"f\": 1, \"f\": 2}]}", "f.json: e.f: given twice (each key once)");
}

static void
an_object_of_too_many_keys_is_refused_rather_than_compared_pairwise(void **state)
{
    (void)state;
    cJSON *root = cJSON_CreateObject();
    char key[32];
    for (int i = 0; i <= U_JSON_MAX_KEYS; ++i) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON_AddNumberToObject(root, key, i);
    }
    struct em_error err = {{0}};
    assert_int_equal(u_json_check_unique_keys(root, "f.json", &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "too many keys"));
    cJSON_Delete(root);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_json_is_placed_by_line_and_column_with_what_was_there),
        cmocka_unit_test(a_key_given_twice_is_refused_by_its_path),
        cmocka_unit_test(an_object_of_too_many_keys_is_refused_rather_than_compared_pairwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
