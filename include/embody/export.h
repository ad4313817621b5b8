/*
 * EMBODY_API marks a function of the library's public API. The library is compiled with
 * hidden visibility (-fvisibility=hidden), so libembody.so exports exactly the functions
 * declared with this mark in the installed headers (include/embody/) and nothing else:
 * its internal helpers cannot clash with an embedder's own names, and a public function
 * cannot be left out. tests/install/test_api_surface.sh compares the two.
 */
#ifndef EMBODY_EXPORT_H
#define EMBODY_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define EMBODY_API __attribute__((visibility("default")))
#else
#define EMBODY_API
#endif

#endif
