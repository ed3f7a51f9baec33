/* A constant ?: condition picks its branch while compiling (the
   DTraceToolkit's OPT_x ? printf(...) : 1 idiom). */
inline int OPT_show = 1;
inline int OPT_hide = 0;

BEGIN
{
	OPT_show ? printf("shown\n") : 1;
	OPT_hide ? printf("hidden\n") : 1;
	!OPT_hide && OPT_show ? printf("both\n") : 1;
	OPT_hide ? 1 : printf("else\n");
	exit(0);
}
