/*
 * getf() gives the file of an open descriptor, NULL for one out of range;
 * the mutex and rwlock predicates read kernel locks nobody holds at BEGIN:
 * the process's credential mutex and its address space's rwlock. Linux's
 * mutexes are adaptive.
 */
BEGIN
{
	printf("%d %d %d\n", getf(0) != NULL, getf(-1) == NULL, getf(1 << 30) == NULL);
	m = &curthread->signal->cred_guard_mutex;
	printf("%d %d %d %d\n", mutex_owned(m), mutex_owner(m) == NULL, mutex_type_adaptive(m), mutex_type_spin(m));
	rw = &curthread->mm->mmap_lock;
	printf("%d %d %d\n", rw_read_held(rw), rw_write_held(rw), rw_iswriter(rw));
	exit(0);
}
