/*
 * export.h - OA_EXPORT marks a function (or object) of the public API. The
 * library is built with -fvisibility=hidden: only what an installed header
 * declares with OA_EXPORT is exported by the shared library, so its symbol
 * table is the API these headers describe and no private helper leaks out.
 */
#ifndef OLLAMA_AUDIT_EXPORT_H
#define OLLAMA_AUDIT_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define OA_EXPORT __attribute__((visibility("default")))
#else
#define OA_EXPORT
#endif

#endif
