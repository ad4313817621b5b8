/*
 * Parsing an output destination "HOST:PORT" from the command line (osc_parse_destination
 * in src/osc/osc.h): strict, so a typo is caught at start with a message naming
 * the option, not discovered later as a silent lack of output.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "osc/osc.h"

#define PORT_HELP "expected HOST:PORT, HOST, :PORT or [IPV6]:PORT, PORT 1-65535"

/* Parses `text` (digits only) as a port; the messages say which rule failed. */
static enum em_result
parse_port(const char *text, const char *option, int *out_port, struct em_error *err)
{
    if (!*text)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: no port after ':' (%s)", option,
                       PORT_HELP);
    long value = 0;
    for (const char *c = text; *c; ++c) {
        if (*c < '0' || *c > '9')
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: port \"%s\" is not a number (expected 1-65535)", option, text);
        if (value <= 65535) /* stop growing once out of range: no overflow */
            value = value * 10 + (*c - '0');
    }
    if (value < 1 || value > 65535)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: port \"%s\" is out of range 1-65535",
                       option, text);
    *out_port = (int)value;
    return EM_OK;
}

/* Checks that `host` is a literal address or a name that resolves (at start: this may
 * wait for DNS). */
static enum em_result
check_host(const char *host, const char *option, struct em_error *err)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST;
    struct addrinfo *found = NULL;
    if (getaddrinfo(host, NULL, &hints, &found) == 0) {
        freeaddrinfo(found);
        return EM_OK;
    }
    hints.ai_flags = 0;
    const int r = getaddrinfo(host, NULL, &hints, &found);
    if (r != 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: host \"%s\" is not an address and cannot be resolved: %s", option,
                       host, gai_strerror(r));
    freeaddrinfo(found);
    return EM_OK;
}

static bool
is_ipv6_literal(const char *text)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET6, text, buf) == 1;
}

/* Splits `text` into a host (copied to `host`, may be empty) and a port text (NULL when
 * there is none). */
static enum em_result
split_destination(const char *text, const char *option, char *host, const char **out_port,
                  struct em_error *err)
{
    const char *host_begin = text;
    size_t host_len;
    const char *port = NULL;
    if (text[0] == '[') { /* [IPV6] or [IPV6]:PORT */
        const char *close = strchr(text, ']');
        if (!close)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: \"%s\" has no closing ']' (%s)",
                           option, text, PORT_HELP);
        host_begin = text + 1;
        host_len = (size_t)(close - host_begin);
        if (close[1] == ':')
            port = close + 2;
        else if (close[1] != '\0')
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: unexpected \"%s\" after ']' in \"%s\" (%s)", option, close + 1,
                           text, PORT_HELP);
        if (host_len == 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: \"%s\" has an empty host (%s)",
                           option, text, PORT_HELP);
    } else {
        const char *colon = strchr(text, ':');
        if (colon && strchr(colon + 1, ':')) {
            /* Several colons: only a bare IPv6 address, without a port. */
            if (!is_ipv6_literal(text))
                return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                               "%s: \"%s\" has more than one ':' (write an IPv6 address in "
                               "brackets, as [::1]:9000)",
                               option, text);
            colon = NULL;
        }
        host_len = colon ? (size_t)(colon - text) : strlen(text);
        if (colon)
            port = colon + 1;
        /* A bare port ("39540"), as --vmc-in takes: digits only are never a host name. */
        if (!colon && strspn(text, "0123456789") == host_len) {
            port = text;
            host_len = 0;
        }
    }
    if (host_len >= OSC_HOST_MAX)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: host name is longer than %d characters",
                       option, OSC_HOST_MAX - 1);
    memcpy(host, host_begin, host_len);
    host[host_len] = '\0';
    *out_port = port;
    return EM_OK;
}

enum em_result
osc_parse_destination(const char *text, const char *option, const char *default_host,
                      int default_port, char *out_host, int *out_port, struct em_error *err)
{
    assert(option && default_host && out_host && out_port);
    assert(default_port >= 1 && default_port <= 65535);
    char host[OSC_HOST_MAX];
    const char *port_text = NULL;
    host[0] = '\0';
    if (text && *text) {
        const enum em_result r = split_destination(text, option, host, &port_text, err);
        if (r != EM_OK)
            return r;
    }
    if (!host[0]) {
        if (strlen(default_host) >= OSC_HOST_MAX)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: default host is too long",
                           option);
        snprintf(host, sizeof host, "%s", default_host);
    }
    int port = default_port;
    if (port_text) {
        const enum em_result r = parse_port(port_text, option, &port, err);
        if (r != EM_OK)
            return r;
    }
    const enum em_result r = check_host(host, option, err);
    if (r != EM_OK)
        return r;
    snprintf(out_host, OSC_HOST_MAX, "%s", host);
    *out_port = port;
    return EM_OK;
}
