/*
 * The `test-tool` command (PROTOCOL.md, "Test hooks"): one of the helper's
 * parsers run on bytes read from a block stream, for table-driven tests of
 * the parsers themselves (tests/helper/test_c_parsers.py).  Nothing is read from
 * or written to the repository.
 */
#ifndef CINNABAR_TEST_TOOL_H
#define CINNABAR_TEST_TOOL_H

struct strbuf;

/*
 * Run the parser named by argv[0] (its arguments after it) on the block
 * stream read from `in`; its result goes to `result`.  Bad input dies
 * with the parser's own message.
 */
void test_tool(const char **argv, FILE *in, struct strbuf *result);

#endif
