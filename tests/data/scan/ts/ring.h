#ifndef RING_H
#define RING_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ring {
    size_t size;
    int *data;
} ring_t;

RING_EXTERN int ring_push(ring_t *r, int value);
RING_EXTERN int ring_pop(ring_t *r, int *out);
size_t ring_size(const ring_t *r);

#ifdef __cplusplus
}
#endif
#endif
