/* Twitter's "Creating a signature" example request, signed with liboauth. */
#ifndef TWITTER_REQUEST_H
#define TWITTER_REQUEST_H

/* The published signature of the example (fixed nonce and timestamp). */
#define EXAMPLE_NONCE "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"
#define EXAMPLE_TIMESTAMP "1318622958"
#define EXAMPLE_SIGNATURE_PARAM "oauth_signature=\"hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D\""

/* Signs the request and returns its Authorization header value
 * ("OAuth oauth_consumer_key=…, …"), to be freed by the caller; NULL if
 * liboauth failed. With nonce and timestamp NULL, liboauth draws a nonce
 * and reads the clock itself, as a live client does. */
char *sign_twitter_example(const char *nonce, const char *timestamp);

#endif
