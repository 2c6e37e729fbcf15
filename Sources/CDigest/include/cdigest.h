#ifndef CDIGEST_H
#define CDIGEST_H

#include <stddef.h>

// MD5 and SHA-256 from libcrypto through dlopen: the daemon needs no other libcrypto function, and mapping
// libcrypto (with its relocations) at start-up costs about a millisecond and a megabyte and a half. The library
// is loaded by the first digest; libcurl's TLS needs it later anyway.

// Loads libcrypto.so.3 once (thread-safe); NULL when it is loaded, else why it could not be (dlerror's text).
const char *cdigest_load(void);

// The MD5 (16 bytes) or SHA-256 (32 bytes) of `count` bytes into `digest`; 1 on success, 0 on failure. Only
// after `cdigest_load` succeeded.
int cdigest_md5(const void *bytes, size_t count, unsigned char digest[16]);
int cdigest_sha256(const void *bytes, size_t count, unsigned char digest[32]);

#endif
