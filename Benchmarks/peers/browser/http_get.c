/*
 * http_get: the single HTTP exchange the scripted browser needs. Each GET
 * uses its own connection with "Connection: close", like a browser's first
 * visit to a host, and reads until the body is complete (Content-Length)
 * or the server closes, so a server that keeps the socket open does not
 * make it hang.
 */
#include "http_get.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Generous for the pages involved (a redirect, a short HTML page). */
#define MAX_ANSWER (1 << 20)
/* A stuck server fails the sign-in instead of hanging the benchmark. */
#define TIMEOUT_SECONDS 10

/* Splits http://host[:port]/path; only loopback hosts are accepted. */
static int parse_url(const char *url, struct sockaddr_in *addr, char *host, size_t host_len, const char **path) {
    const char *p = url;
    if (strncmp(p, "http://", 7) != 0) {
        fprintf(stderr, "browser: only http:// URLs: %s\n", url);
        return -1;
    }
    p += 7;
    size_t authority = strcspn(p, "/?#");
    if (authority == 0 || authority >= host_len) {
        fprintf(stderr, "browser: bad host in %s\n", url);
        return -1;
    }
    memcpy(host, p, authority);
    host[authority] = '\0';
    *path = p + authority; /* "", "/…" or "?…": see the request line */

    int port = 80;
    char name[256];
    const char *colon = strrchr(host, ':');
    size_t name_len = colon ? (size_t)(colon - host) : authority;
    if (name_len >= sizeof name)
        return -1;
    memcpy(name, host, name_len);
    name[name_len] = '\0';
    if (colon)
        port = atoi(colon + 1);

    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((unsigned short)port);
    if (strcmp(name, "localhost") == 0)
        addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, name, &addr->sin_addr) != 1 || (ntohl(addr->sin_addr.s_addr) >> 24) != 127) {
        fprintf(stderr, "browser: only 127.0.0.0/8 and localhost: %s\n", url);
        return -1;
    }
    if (port <= 0 || port > 65535) {
        fprintf(stderr, "browser: bad port in %s\n", url);
        return -1;
    }
    return 0;
}

static int send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads until EOF or until headers + Content-Length bytes have arrived. */
static ssize_t read_answer(int fd, char *buf, size_t cap) {
    size_t used = 0;
    long want = -1; /* total bytes expected, once known */
    while (used < cap - 1 && (want < 0 || (long)used < want)) {
        ssize_t n = recv(fd, buf + used, cap - 1 - used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        used += (size_t)n;
        buf[used] = '\0';
        char *end = want < 0 ? strstr(buf, "\r\n\r\n") : NULL;
        if (end) {
            long body = -1;
            for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n"))
                if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
                    body = strtol(line + 2 + 15, NULL, 10);
            if (body >= 0)
                want = (long)(end + 4 - buf) + body;
        }
    }
    buf[used] = '\0';
    return (ssize_t)used;
}

/* Fills in the status and the Location header from the raw answer. */
static int parse_answer(const char *buf, struct http_response *response) {
    response->location[0] = '\0';
    if (sscanf(buf, "HTTP/1.%*d %d", &response->status) != 1)
        return -1;
    const char *end = strstr(buf, "\r\n\r\n");
    for (const char *line = strstr(buf, "\r\n"); line && (!end || line < end); line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Location:", 9) != 0)
            continue;
        const char *v = line + 2 + 9;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strcspn(v, "\r\n");
        if (len >= sizeof response->location)
            return -1;
        memcpy(response->location, v, len);
        response->location[len] = '\0';
    }
    return 0;
}

int http_get(const char *url, struct http_response *response) {
    struct sockaddr_in addr;
    char host[256];
    const char *path;
    if (parse_url(url, &addr, host, sizeof host, &path) != 0)
        return -1;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("browser: socket");
        return -1;
    }
    struct timeval timeout = {TIMEOUT_SECONDS, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    int one = 1; /* the request goes out in one write; don't let Nagle hold it */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "browser: connect to %s: %s\n", host, strerror(errno));
        close(fd);
        return -1;
    }

    static char request[HTTP_MAX_URL + 512];
    int len = snprintf(request, sizeof request,
                       "GET %s%.*s HTTP/1.1\r\nHost: %s\r\nUser-Agent: authkit-bench-browser/1\r\n"
                       "Accept: text/html,*/*\r\nConnection: close\r\n\r\n",
                       path[0] == '/' ? "" : "/",     /* origin-form always starts with '/' */
                       (int)strcspn(path, "#"), path, /* a fragment is never sent (RFC 9110 §7.1) */
                       host);
    static char answer[MAX_ANSWER];
    ssize_t got = -1;
    if (len > 0 && len < (int)sizeof request && send_all(fd, request, (size_t)len) == 0)
        got = read_answer(fd, answer, sizeof answer);
    close(fd);
    if (got <= 0 || parse_answer(answer, response) != 0) {
        fprintf(stderr, "browser: no valid HTTP answer from %s%s%s\n", host, got < 0 ? ": " : "",
                got < 0 ? strerror(errno) : "");
        return -1;
    }
    return 0;
}
