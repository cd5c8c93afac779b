/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Conversions between CPU order and the wire's __be types (and __le ones),
 * for either host byte order. Test the host order with the kernel's
 * __LITTLE_ENDIAN_BITFIELD/__BIG_ENDIAN_BITFIELD: glibc defines both
 * __LITTLE_ENDIAN and __BIG_ENDIAN, so #ifdef on those misleads here.
 */
#ifndef SIW2_SHIM_LINUX_BYTEORDER_GENERIC_H
#define SIW2_SHIM_LINUX_BYTEORDER_GENERIC_H

#include <linux/swab.h>
#include <linux/types.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define __LITTLE_ENDIAN_BITFIELD
#define cpu_to_be16(x) ((__force __be16)swab16(x))
#define cpu_to_be32(x) ((__force __be32)swab32(x))
#define cpu_to_be64(x) ((__force __be64)swab64(x))
#define be16_to_cpu(x) swab16((__force __u16)(__be16)(x))
#define be32_to_cpu(x) swab32((__force __u32)(__be32)(x))
#define be64_to_cpu(x) swab64((__force __u64)(__be64)(x))
#define cpu_to_le16(x) ((__force __le16)(__u16)(x))
#define cpu_to_le32(x) ((__force __le32)(__u32)(x))
#define cpu_to_le64(x) ((__force __le64)(__u64)(x))
#define le16_to_cpu(x) ((__force __u16)(__le16)(x))
#define le32_to_cpu(x) ((__force __u32)(__le32)(x))
#define le64_to_cpu(x) ((__force __u64)(__le64)(x))
#else
#define __BIG_ENDIAN_BITFIELD
#define cpu_to_be16(x) ((__force __be16)(__u16)(x))
#define cpu_to_be32(x) ((__force __be32)(__u32)(x))
#define cpu_to_be64(x) ((__force __be64)(__u64)(x))
#define be16_to_cpu(x) ((__force __u16)(__be16)(x))
#define be32_to_cpu(x) ((__force __u32)(__be32)(x))
#define be64_to_cpu(x) ((__force __u64)(__be64)(x))
#define cpu_to_le16(x) ((__force __le16)swab16(x))
#define cpu_to_le32(x) ((__force __le32)swab32(x))
#define cpu_to_le64(x) ((__force __le64)swab64(x))
#define le16_to_cpu(x) swab16((__force __u16)(__le16)(x))
#define le32_to_cpu(x) swab32((__force __u32)(__le32)(x))
#define le64_to_cpu(x) swab64((__force __u64)(__le64)(x))
#endif

#define cpu_to_be16p(p) cpu_to_be16(*(p))
#define cpu_to_be32p(p) cpu_to_be32(*(p))
#define cpu_to_be64p(p) cpu_to_be64(*(p))
#define be16_to_cpup(p) be16_to_cpu(*(p))
#define be32_to_cpup(p) be32_to_cpu(*(p))
#define be64_to_cpup(p) be64_to_cpu(*(p))

static inline void be16_add_cpu(__be16 *var, u16 val)
{
	*var = cpu_to_be16(be16_to_cpu(*var) + val);
}

static inline void be32_add_cpu(__be32 *var, u32 val)
{
	*var = cpu_to_be32(be32_to_cpu(*var) + val);
}

static inline void be64_add_cpu(__be64 *var, u64 val)
{
	*var = cpu_to_be64(be64_to_cpu(*var) + val);
}

/* The kernel's own htonl() family; glibc's may already be there. */
#ifndef htonl
#define htonl(x) cpu_to_be32(x)
#define ntohl(x) be32_to_cpu(x)
#define htons(x) cpu_to_be16(x)
#define ntohs(x) be16_to_cpu(x)
#endif

#endif
