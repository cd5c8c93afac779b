/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the connection manager's two files tell each other: cm.c owns the
 * endpoints (struct siw2_cep) and the CM's workqueue, listen.c the
 * listening sockets and the listeners on them (struct siw2_listener).
 * Neither looks inside the other's structures.
 *
 * A passive endpoint is started by listen.c's accept path
 * (siw2_cep_passive()) and waits on its listener's pending list until the
 * ULP answers, it fails, or the listener goes. That list, and each
 * endpoint's node on it, are under the lock of the listener's socket:
 * the siw2_cep_*() functions below that touch them are called with it
 * held, the siw2_listener_*() ones take it (listen.c, "Pending
 * connections"; cm.c, "Locking").
 */
#ifndef SIW2_CM_H
#define SIW2_CM_H

#include <linux/types.h>

struct iw_cm_event;
struct iw_cm_id;
struct list_head;
struct net;
struct socket;
struct work_struct;
struct siw2_cep;
struct siw2_device;
struct siw2_listener;

/* cm.c */
bool siw2_cm_queue(struct work_struct *work);
bool siw2_cm_port_reserved(const struct iw_cm_id *id);
int siw2_cep_passive(struct siw2_listener *l, struct siw2_device *sdev,
		     struct net *net, struct socket *sock,
		     struct list_head *pending);
struct siw2_cep *siw2_cep_pending_take(struct list_head *pending);
void siw2_cep_unlisten(struct siw2_cep *cep);

/* listen.c */
void siw2_listener_unlink(struct siw2_listener *l, struct list_head *node);
int siw2_listener_upcall(struct siw2_listener *l, struct list_head *node,
			 struct iw_cm_event *ev);

#endif /* SIW2_CM_H */
