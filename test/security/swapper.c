/*
 * The hostile process of the race tests: exchanges two names (a real folder and a symlink to a
 * folder outside the workspace) with renameat2(RENAME_EXCHANGE), atomically, as fast as it can
 * with a short pause each time, for at most the given number of seconds, then exits (with the
 * names as they started). Usage: swapper A B SECONDS. Prints the number of exchanges.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int exchange(const char *a, const char *b) {
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: swapper A B SECONDS\n");
    return 2;
  }
  double limit = atof(argv[3]);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long swaps = 0;
  for (;;) {
    if (exchange(argv[1], argv[2]) != 0) {
      perror("renameat2");
      return 1;
    }
    swaps++;
    usleep(20);
    if ((swaps & 255) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 >= limit) break;
    }
  }
  if (swaps % 2 && exchange(argv[1], argv[2]) == 0) swaps++;
  printf("%ld\n", swaps);
  return 0;
}
