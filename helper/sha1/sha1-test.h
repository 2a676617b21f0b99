/*
 * Test hooks of the multi-lane SHA-1 (sha1-lanes.h), for the helper's
 * `test-sha1` command (PROTOCOL.md, "Test hooks").
 */
#ifndef CINNABAR_SHA1_TEST_H
#define CINNABAR_SHA1_TEST_H

/*
 * Hash `count` pseudo-random messages (from `seed`) through the lanes,
 * split into pieces at odd offsets, lanes refilled as they finish, and
 * compare each digest with OpenSSL's. Return the number of mismatches;
 * each is also reported on stderr.
 */
unsigned sha1_test_messages(unsigned seed, unsigned count);

/* The path the lanes take here: "16-lane", "8-lane", "2-lane", "one-lane". */
const char *sha1_test_path(void);

/*
 * Time each SHA-1 path on `mb` MB per message (CPU time of the thread);
 * print GB/s to stdout.
 */
void sha1_test_speed(unsigned mb);

#endif
