/* One HTTP/1.1 GET over a fresh loopback connection (see http_get.c). */
#ifndef HTTP_GET_H
#define HTTP_GET_H

#define HTTP_MAX_URL 8192

struct http_response {
    int status;                    /* e.g. 302 */
    char location[HTTP_MAX_URL];   /* the Location header, or "" */
};

/* GETs an http://127.0.0.1… or http://localhost… URL, reads the whole
 * answer and closes. Returns 0 on success, -1 after saying why on stderr. */
int http_get(const char *url, struct http_response *response);

#endif
