/* Copy on write for finished models' constants: a traced model's initializer reads its
 * storage in place, registered on the storage's list of snapshots, and the first in-place write
 * to the storage gives every such model one shared copy of today's bytes first. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* An entry of a storage's copy-on-write list: a model's constant that keeps today's values. */
struct om_snapshot {
  om_tensor *tensor; /* the constant's tensor (borrowed: its model holds it); its storage is replaced by a copy on write */
  om_snapshot *next;
};

om_snapshot *om__snapshot_take(om_tensor *t, const char *who) {
  om_snapshot *s = om__alloc(sizeof *s, who);
  if (!s) return NULL;
  s->tensor = t;
  s->next = t->storage->snapshots;
  t->storage->snapshots = s;
  return s;
}

void om__snapshot_drop(om_snapshot *s) {
  if (!s) return;
  for (om_snapshot **p = &s->tensor->storage->snapshots; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  free(s);
}

bool om__storage_will_change(om_storage *s, const char *who) {
  if (!s->snapshots) return true;
  /* Every traced model reading s in place gets one shared copy of today's bytes. */
  om_storage *copy = om__storage_new(s->nbytes, false, who);
  if (!copy) return false;
  memcpy(copy->data, s->data, s->nbytes);
  copy->version = s->version;
  while (s->snapshots) {
    om_snapshot *snap = s->snapshots;
    s->snapshots = snap->next;
    snap->next = copy->snapshots; /* stays on the copy's list, so freeing the model unlinks it there */
    copy->snapshots = snap;
    snap->tensor->storage = copy;
    copy->refcount++;
    om__storage_release(s);
  }
  om__storage_release(copy); /* the snapshots hold it now */
  return true;
}
