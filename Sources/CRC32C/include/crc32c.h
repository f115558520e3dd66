// CRC-32C (Castagnoli), the checksum of every record of the log (docs/FORMAT.md).
#ifndef EVENTSTORE_CRC32C_H
#define EVENTSTORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Extends `crc` (0 to start) by `length` bytes at `bytes` and returns the new CRC-32C.
/// Uses the processor's CRC-32C instruction when it has one (SSE 4.2 on x86_64, the CRC
/// extension on arm64), else a table; every path gives the same value.
uint32_t es_crc32c_extend(uint32_t crc, const void *bytes, size_t length);

/// The checksum of a record: the CRC-32C of `position` as 8 bytes big-endian followed by the
/// `length` bytes at `bytes` (docs/FORMAT.md).
uint32_t es_crc32c_record(uint64_t position, const void *bytes, size_t length);

/// The same, always through the table (for tests that compare the two paths).
uint32_t es_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t length);

#endif
