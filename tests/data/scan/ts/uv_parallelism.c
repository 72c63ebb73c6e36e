unsigned int uv_available_parallelism(void) {
  long rc = -1;

#ifdef __linux__
  cpu_set_t set;

  memset(&set, 0, sizeof(set));

  /* sysconf(_SC_NPROCESSORS_ONLN) in musl calls sched_getaffinity() but in
   * glibc it's... complicated... so for consistency try sched_getaffinity()
   * before falling back to sysconf(_SC_NPROCESSORS_ONLN).
   */
  if (0 == sched_getaffinity(0, sizeof(set), &set))
    rc = uv__cpu_count(&set);
#elif defined(__MVS__)
  rc = __get_num_online_cpus();
  if (rc < 1)
    rc = 1;

  return (unsigned) rc;
#elif defined(__FreeBSD__)
  cpuset_t set;

  memset(&set, 0, sizeof(set));

  if (0 == cpuset_getaffinity(CPU_LEVEL_WHICH, CPU_WHICH_PID, -1, sizeof(set), &set))
    rc = uv__cpu_count(&set);
#elif defined(__NetBSD__)
  cpuset_t* set = cpuset_create();
  if (set != NULL) {
    if (0 == sched_getaffinity_np(getpid(), cpuset_size(set), set))
      rc = uv__cpu_count(set);
    cpuset_destroy(set);
  }
#elif defined(__APPLE__)
  int nprocs;
  size_t i;
  size_t len = sizeof(nprocs);
  static const char *mib[] = {
    "hw.activecpu",
    "hw.logicalcpu",
    "hw.ncpu"
  };

  for (i = 0; i < ARRAY_SIZE(mib); i++) {
    if (0 == sysctlbyname(mib[i], &nprocs, &len, NULL, 0) &&
	      len == sizeof(nprocs) &&
	      nprocs > 0) {
      rc = nprocs;
      break;
    }
  }
#elif defined(__OpenBSD__)
  int nprocs;
  size_t i;
  size_t len = sizeof(nprocs);
  static int mib[][2] = {
# ifdef HW_NCPUONLINE
    { CTL_HW, HW_NCPUONLINE },
# endif
    { CTL_HW, HW_NCPU }
  };

  for (i = 0; i < ARRAY_SIZE(mib); i++) {
    if (0 == sysctl(mib[i], ARRAY_SIZE(mib[i]), &nprocs, &len, NULL, 0) &&
	len == sizeof(nprocs) &&
        nprocs > 0) {
      rc = nprocs;
      break;
    }
  }
#endif /* __linux__ */

  if (rc < 0)
    rc = sysconf(_SC_NPROCESSORS_ONLN);

#ifdef __linux__
  {
    long long quota = 0;

    if (uv__get_constrained_cpu(&quota) == 0)
      if (quota > 0 && quota < rc)
        rc = quota;
  }
#endif  /* __linux__ */

  if (rc < 1)
    rc = 1;

  return (unsigned) rc;
}
