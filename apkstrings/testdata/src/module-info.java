/** Test fixture module: its module-info.class holds CONSTANT_Module and CONSTANT_Package. */
module fixture {
    exports fixture;
}
