/*
 * browser: the scripted browser both sides' sign-ins launch as $BROWSER.
 *
 *     browser [ignored...] URL
 *
 * It does what a user's browser does in a sign-in where consent is
 * automatic: GET the authorization URL, follow the provider's redirect to
 * the app's loopback listener with another GET, read the whole page, close,
 * exit 0. Plain HTTP to 127.0.0.1/localhost only: this is a benchmark tool,
 * not a browser.
 *
 * Written in C on plain sockets so its start-up (a few hundred µs) adds as
 * little as possible to a sign-in's wall time, and identically to both
 * sides. It never forks or detaches: the launching app sees it exit.
 * Exit status: 0 when the last page was 2xx, 1 otherwise (said on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_get.h"

/* Enough for authorize → callback, with room for a provider that redirects twice. */
#define MAX_REDIRECTS 5

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: browser URL\n");
        return 1;
    }
    char url[HTTP_MAX_URL];
    if (snprintf(url, sizeof url, "%s", argv[argc - 1]) >= (int)sizeof url) {
        fprintf(stderr, "browser: URL too long\n");
        return 1;
    }
    for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
        struct http_response response;
        if (http_get(url, &response) != 0)
            return 1; /* http_get said why */
        if (response.status >= 300 && response.status < 400 && response.location[0]) {
            /* A relative Location keeps the scheme, host and port. */
            if (response.location[0] == '/') {
                char *path = strchr(url + strlen("http://"), '/');
                size_t prefix = path ? (size_t)(path - url) : strlen(url);
                if (prefix + strlen(response.location) >= sizeof url) {
                    fprintf(stderr, "browser: redirect too long\n");
                    return 1;
                }
                strcpy(url + prefix, response.location);
            } else {
                snprintf(url, sizeof url, "%s", response.location);
            }
            continue;
        }
        if (response.status < 200 || response.status >= 300) {
            fprintf(stderr, "browser: %s answered %d\n", url, response.status);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "browser: more than %d redirects\n", MAX_REDIRECTS);
    return 1;
}
