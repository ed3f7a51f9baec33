/* xlate<> finds an exact translator first, then one whose input the
 * operand passes as (DT_XLATE_FUZZY): an int64_t or an int given to a
 * translator from uintptr_t (myaut/dtrace-stap-book stat.d's idiom). */
struct info {
	uint64_t doubled;
};

translator struct info < uintptr_t p > {
	doubled = p * 2;
};

BEGIN
{
	this->wide = (int64_t)21;
	this->narrow = 5;
	printf("%d %d\n", xlate <struct info *> (this->wide)->doubled,
	    xlate <struct info> (this->narrow).doubled);
	exit(0);
}
