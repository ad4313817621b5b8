/*
 * The sanitizer build's defaults, compiled into each of its programs and libraries: weak,
 * since a library made of another's objects (libembody.so of the core's) carries it twice;
 * the first definition loaded wins, and ASAN_OPTIONS set by hand still override each flag.
 *
 * intercept_tls_get_addr=0: LeakSanitizer's tracer must not read dynamic TLS blocks through
 * the runtime's __tls_get_addr interceptor. Up to LLVM 16 (Debian 12 has 14) that
 * interceptor takes a malloc'd block that happens to start 16 bytes into a page for glibc
 * 2.19's header and reads the two words before it as an address; the tracer then dies at
 * exit ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error") on
 * whichever machine's memory layout puts a block there (Mesa's threads in test_app_compare
 * on one kind of machine). Leaks are still checked; only dynamic TLS is not scanned.
 */
const char *__asan_default_options(void);

__attribute__((visibility("default"), used, weak)) const char *
__asan_default_options(void)
{
    return "intercept_tls_get_addr=0";
}
