// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), as iSCSI, ext4 and
// LevelDB use it: the initial value and the final value are inverted.
#include "crc32c.h"

#include <string.h>

#define POLY 0x82F63B78u

// Eight tables for slicing-by-8: table[k][b] is the CRC of byte b followed by k zero bytes.
static uint32_t table[8][256];
static int table_ready = 0;

static void build_table(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (POLY & (0u - (crc & 1u)));
        table[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = table[0][b];
        for (int k = 1; k < 8; k++) {
            crc = table[0][crc & 0xFF] ^ (crc >> 8);
            table[k][b] = crc;
        }
    }
    // Publishing twice from racing threads writes the same values: harmless.
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t es_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t length) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();
    const unsigned char *p = (const unsigned char *)bytes;
    crc = ~crc;
    while (length >= 8) {
        uint32_t low, high;
        memcpy(&low, p, 4);
        memcpy(&high, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        low = __builtin_bswap32(low);
        high = __builtin_bswap32(high);
#endif
        low ^= crc;
        crc = table[7][low & 0xFF] ^ table[6][(low >> 8) & 0xFF] ^ table[5][(low >> 16) & 0xFF] ^ table[4][low >> 24]
            ^ table[3][high & 0xFF] ^ table[2][(high >> 8) & 0xFF] ^ table[1][(high >> 16) & 0xFF] ^ table[0][high >> 24];
        p += 8;
        length -= 8;
    }
    while (length--) crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)

__attribute__((target("sse4.2")))
static uint32_t extend_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}

static int has_hardware(void) {
    static int known = -1;
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
}

#elif defined(__aarch64__)

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

__attribute__((target("crc")))
static uint32_t extend_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_arm_crc32cd(c, word);
        p += 8;
        length -= 8;
    }
    while (length--) c = __builtin_arm_crc32cb(c, *p++);
    return ~c;
}

static int has_hardware(void) {
#if defined(__linux__)
    static int known = -1;
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        value = (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
#else
    return 1;  // Apple's arm64 processors all have the CRC extension.
#endif
}

#else

static uint32_t extend_hardware(uint32_t crc, const void *bytes, size_t length) {
    return es_crc32c_extend_portable(crc, bytes, length);
}

static int has_hardware(void) { return 0; }

#endif

uint32_t es_crc32c_extend(uint32_t crc, const void *bytes, size_t length) {
    return has_hardware() ? extend_hardware(crc, bytes, length) : es_crc32c_extend_portable(crc, bytes, length);
}

uint32_t es_crc32c_record(uint64_t position, const void *bytes, size_t length) {
    unsigned char key[8];
    for (int i = 0; i < 8; i++) key[i] = (unsigned char)(position >> (56 - 8 * i));
    if (has_hardware()) return extend_hardware(extend_hardware(0, key, 8), bytes, length);
    return es_crc32c_extend_portable(es_crc32c_extend_portable(0, key, 8), bytes, length);
}
