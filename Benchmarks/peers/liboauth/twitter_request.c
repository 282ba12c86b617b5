/*
 * One signing operation with liboauth, the way its documentation and its
 * oauthtest2 example use the API to get an Authorization header: split the
 * URL (with the form body's parameters appended, which liboauth's docs say
 * to do for POST parameters) into an array, sign the array, serialize the
 * oauth_* entries as a header. Everything liboauth allocates is freed.
 */
#include "twitter_request.h"

#include <stddef.h> /* before oauth.h, which uses size_t without including it */
#include <oauth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The request line and body parameters: the body is form-encoded, so its
 * parameters are signed (RFC 5849 §3.4.1.3.1) and go in with the query's. */
#define URL_WITH_BODY                                                                  \
    "https://api.twitter.com/1.1/statuses/update.json?include_entities=true"          \
    "&status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"

#define CONSUMER_KEY "xvz1evFS4wEEPTGEFPHBog"
#define CONSUMER_SECRET "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw"
#define TOKEN "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"
#define TOKEN_SECRET "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"

char *sign_twitter_example(const char *nonce, const char *timestamp) {
    char **argv = NULL;
    int argc = oauth_split_url_parameters(URL_WITH_BODY, &argv);

    /* liboauth's oauth_add_protocol (called by the signing function) adds
     * oauth_nonce and oauth_timestamp only when the array lacks them, so
     * putting them in first is how a fixed pair is signed. */
    if (nonce && timestamp) {
        char param[128];
        snprintf(param, sizeof param, "oauth_nonce=%s", nonce);
        oauth_add_param_to_array(&argc, &argv, param);
        snprintf(param, sizeof param, "oauth_timestamp=%s", timestamp);
        oauth_add_param_to_array(&argc, &argv, param);
    }

    /* Adds the protocol parameters, sorts, builds the base string, HMAC-SHA1s
     * it and appends oauth_signature, without serializing a URL we don't use. */
    oauth_sign_array2_process(&argc, &argv, NULL, OA_HMAC, "POST",
                              CONSUMER_KEY, CONSUMER_SECRET, TOKEN, TOKEN_SECRET);

    /* 2: only oauth_* entries; 4: quoted values; ", " between them. */
    char *params = oauth_serialize_url_sep(argc, 1, argv, ", ", 6);
    oauth_free_array(&argc, &argv);
    if (!params)
        return NULL;

    size_t len = strlen(params);
    char *header = malloc(len + sizeof "OAuth ");
    if (header) {
        memcpy(header, "OAuth ", 6);
        memcpy(header + 6, params, len + 1);
    }
    free(params);
    return header;
}
