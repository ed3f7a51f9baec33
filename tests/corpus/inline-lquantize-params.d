/* Integer inlines are constants for aggregating functions' parameters. */
inline int LOW = 0;
inline int HIGH = 4;
inline int STEP = 2;

BEGIN
{
	@ = lquantize(3, LOW, HIGH, STEP);
	printa(@);
	exit(0);
}
