#ifndef CDIGEST_H
#define CDIGEST_H

#include <stddef.h>

// MD5, SHA-256 and base64 from libcrypto through dlopen: the daemon needs no other libcrypto function, and mapping
// libcrypto (with its relocations) at start-up costs about a millisecond and a megabyte and a half. The library
// is loaded by the first use; libcurl's TLS needs it later anyway.

// Loads libcrypto.so.3 once (thread-safe); NULL when it is loaded, else why it could not be (dlerror's text).
const char *cdigest_load(void);

// The MD5 (16 bytes) or SHA-256 (32 bytes) of `count` bytes into `digest`; 1 on success, 0 on failure. Only
// after `cdigest_load` succeeded.
int cdigest_md5(const void *bytes, size_t count, unsigned char digest[16]);
int cdigest_sha256(const void *bytes, size_t count, unsigned char digest[32]);

// Base64 (RFC 4648, padded, no line breaks) of `count` bytes (at most INT_MAX / 4 * 3) into `text`, which has room
// for 4 * ((count + 2) / 3) + 1 characters (the last a NUL); returns the characters written before the NUL.
// Only after `cdigest_load` succeeded.
size_t cdigest_base64_encode(const void *bytes, size_t count, char *text);

// Decodes `count` base64 characters (a multiple of 4, at most INT_MAX) into `bytes`, which has room for
// count / 4 * 3; returns how many it wrote, padding included as zero bytes (the caller drops one per `=`), or -1
// when `text` is not base64. libcrypto's EVP_DecodeBlock: leading and trailing white space is skipped.
// Only after `cdigest_load` succeeded.
long cdigest_base64_decode(const char *text, size_t count, void *bytes);

#endif
