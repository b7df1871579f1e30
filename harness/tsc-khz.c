// SPDX-License-Identifier: GPL-2.0
/*
 * The host's TSC rate in kHz, which a guest under TCG reads as its own
 * (QEMU's rdtsc is the host's).  The harness gives it to the guest as
 * tsc_early_khz= (qemu-configs/x86_64.py): without ACPI the guest has no
 * HPET or PM timer to calibrate its TSC against, and against the PIT alone
 * the calibration fails on a busy host, leaving the guest on jiffies.
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
	struct timespec wait = { 0, 200000000 };
	double t0 = now();
	unsigned long long c0 = __rdtsc();

	nanosleep(&wait, NULL);
	printf("%.0f\n", (__rdtsc() - c0) / (now() - t0) / 1000);
	return 0;
}
