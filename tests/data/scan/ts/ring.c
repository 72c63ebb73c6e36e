/* A ring buffer: "struct fake { int x; }" in a comment is not a definition. */
#include <stdlib.h>
#include "ring.h"

#define RING_MAX 4096

static const char *names[] = {"struct not_a_type {", "int not_a_func(void);"};
extern int ring_debug;
int ring_count = 0;

typedef struct ring_node {
    int value;
    struct ring_node *next;
} ring_node_t;

enum ring_state { RING_EMPTY, RING_FULL };

typedef int (*ring_cb)(int value);

static int
ring_grow(ring_t *r, size_t extra)
{
    return r->size + extra > RING_MAX ? -1 : 0;
}

RING_API int ring_push(ring_t *r, int value)
{
    if (ring_grow(r, 1) < 0)
        return -1;
    return value;
}

int (*ring_hook)(int) = NULL;
