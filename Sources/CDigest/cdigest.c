#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "cdigest.h"

// EVP_Digest's signature with libcrypto's opaque types as void pointers.
static int (*evp_digest)(const void *, size_t, unsigned char *, unsigned int *, const void *, void *);
static const void *(*evp_md5)(void);
static const void *(*evp_sha256)(void);
static int (*evp_encode_block)(unsigned char *, const unsigned char *, int);
static int (*evp_decode_block)(unsigned char *, const unsigned char *, int);

static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
    *(void **)&evp_digest = dlsym(library, "EVP_Digest");
    *(void **)&evp_md5 = dlsym(library, "EVP_md5");
    *(void **)&evp_sha256 = dlsym(library, "EVP_sha256");
    *(void **)&evp_encode_block = dlsym(library, "EVP_EncodeBlock");
    *(void **)&evp_decode_block = dlsym(library, "EVP_DecodeBlock");
    if (evp_digest == NULL || evp_md5 == NULL || evp_sha256 == NULL || evp_encode_block == NULL
        || evp_decode_block == NULL)
        snprintf(load_error, sizeof load_error,
            "libcrypto.so.3 lacks one of EVP_Digest, EVP_md5, EVP_sha256, EVP_EncodeBlock, EVP_DecodeBlock");
}

const char *cdigest_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

int cdigest_md5(const void *bytes, size_t count, unsigned char digest[16]) {
    unsigned int length = 0;
    return evp_digest(bytes, count, digest, &length, evp_md5(), NULL) == 1 && length == 16;
}

int cdigest_sha256(const void *bytes, size_t count, unsigned char digest[32]) {
    unsigned int length = 0;
    return evp_digest(bytes, count, digest, &length, evp_sha256(), NULL) == 1 && length == 32;
}

size_t cdigest_base64_encode(const void *bytes, size_t count, char *text) {
    return (size_t)evp_encode_block((unsigned char *)text, bytes, (int)count);
}

long cdigest_base64_decode(const char *text, size_t count, void *bytes) {
    return evp_decode_block(bytes, (const unsigned char *)text, (int)count);
}
