// SPDX-License-Identifier: GPL-2.0
/*
 * siw2: software iWARP (RDMAP/DDP/MPA over kernel TCP sockets).
 *
 * Only the module's init/exit ladder lives here.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <rdma/rdma_netlink.h>

#include "siw2.h"

static int __init siw2_mod_init(void)
{
	int ret;

	siw2_crc_init();
	siw2_copy_init();
	siw2_debug_init();
	ret = siw2_mr_init();
	if (ret)
		goto err_debug;
	ret = siw2_stream_init();
	if (ret)
		goto err_mr;
	ret = siw2_sqpoll_init();
	if (ret)
		goto err_stream;
	ret = siw2_cm_init();
	if (ret)
		goto err_sqpoll;
	ret = siw2_listen_init();
	if (ret)
		goto err_cm;
	ret = siw2_device_init();
	if (ret)
		goto err_listen;
	return 0;

err_listen:
	siw2_listen_uninit();
err_cm:
	siw2_cm_uninit();
err_sqpoll:
	siw2_sqpoll_uninit();
err_stream:
	siw2_stream_uninit();
err_mr:
	siw2_mr_uninit();
err_debug:
	siw2_debug_uninit();
	return ret;
}

static void __exit siw2_mod_exit(void)
{
	siw2_device_uninit();
	siw2_listen_uninit();
	siw2_cm_uninit();
	siw2_sqpoll_uninit();
	siw2_stream_uninit();
	siw2_mr_uninit();
	siw2_debug_uninit();
	/* The last zero-copy object's free runs module code (zcopy.c). */
	rcu_barrier();
}

module_init(siw2_mod_init);
module_exit(siw2_mod_exit);

MODULE_AUTHOR("The siw2 authors");
MODULE_DESCRIPTION("Software iWARP RDMA device");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(SIW2_LINK_TYPE);
