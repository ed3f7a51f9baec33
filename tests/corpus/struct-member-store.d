/* A struct-typed member is assignable from a struct of its type
   (dtrace-utils' struct/tst.global_local_struct). */
struct coords { int x, y; };
struct particle { struct coords position; struct coords velocity; };
struct particle P;
struct coords C;
this struct coords c;

BEGIN
{
	C.x = 1;
	C.y = 2;
	this->c.x = 3;
	this->c.y = 4;
	P.position = C;
	P.velocity = this->c;
	printf("%d %d %d %d\n", P.position.x, P.position.y, P.velocity.x, P.velocity.y);
	exit(0);
}
