// The system LMDB header (liblmdb-dev), exposed to Swift as the CLMDB module.
#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <lmdb.h>
#endif
