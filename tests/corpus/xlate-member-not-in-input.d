/* A script's translator is checked where it is declared. */
struct in { int i; };
struct out { int o; };

translator struct out < struct in *p >
{
	o = p->nosuch;
};
